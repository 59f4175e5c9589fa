// What a conversation id may be. Ids name workflows, and the worker keeps files under them
// (`~/.faheem/outputs/<id>`, `~/.faheem/undo/<id>`) that a sandbox may mount: an id with `/`, `..`
// or a NUL would reach another folder. Every entry (CLI, SDK, ACP, console) and the worker check
// ids with this. The CLI, the SDK and the worker share it.
import path from 'node:path';
import { InvalidRequestError } from '../core/errors.js';

/** A conversation id someone chooses (`faheem start --id`, `Conversation.create({ id })`, `fork --id`). */
export const CONVERSATION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * A sub-agent's id is its parent's with `.sub-<n>` added (once a level), so it may be longer than
 * an id one chooses; its parent's part still follows the pattern. 255 is a file name's limit.
 */
const SUB_AGENT_SUFFIX = /(?:\.sub-[0-9]{1,9})+$/;
const MAX_EXISTING_ID = 255;

/** Whether the id is one a person may give a new conversation, or any existing conversation's id (sub-agents' too). */
export type ConversationIdUse = 'new' | 'existing';

/** Why `id` is not a valid conversation id, or undefined when it is. */
export function conversationIdProblem(id: unknown, use: ConversationIdUse = 'existing'): string | undefined {
  const shown = typeof id === 'string' ? JSON.stringify(id.length > 200 ? `${id.slice(0, 200)}…` : id) : String(id);
  const problem =
    `conversation id ${shown} is not valid: ids are 1–128 characters of letters, digits, '.', '_', ':' and '-', ` +
    "start with a letter or digit, and never contain '..'";
  if (typeof id !== 'string' || id.includes('..')) return problem;
  if (CONVERSATION_ID_PATTERN.test(id)) return undefined;
  if (use === 'new' || id.length > MAX_EXISTING_ID) return problem;
  // A sub-agent of a conversation whose own id is valid.
  const parent = id.replace(SUB_AGENT_SUFFIX, '');
  if (parent !== id && CONVERSATION_ID_PATTERN.test(parent)) return undefined;
  // A conversation started before ids were checked ('fix bug', 'café') must stay reachable: an
  // existing id needs only to be safe as one file name (no separator, NUL or control character,
  // not hidden).
  const unsafe = [...id].some((c) => c === '/' || c === '\\' || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
  return id !== '' && !id.startsWith('.') && !unsafe ? undefined : problem;
}

/**
 * `id` when it is a valid conversation id (see {@link CONVERSATION_ID_PATTERN}; `existing` also
 * takes sub-agents' longer ids); otherwise an InvalidRequestError that says what ids may be.
 */
export function checkConversationId(id: unknown, use: ConversationIdUse = 'existing'): string {
  const problem = conversationIdProblem(id, use);
  if (problem) throw new InvalidRequestError(problem);
  return id as string;
}

/**
 * The folder under `root` that holds a conversation's files on the worker (`root/<id>`), or, for an
 * id that is not valid (a call that did not come through our entries: a workflow started by hand),
 * why none is: the tool then answers with that as its observation and touches no file.
 */
export function conversationFolder(root: string, id: string): { dir: string } | { refused: string } {
  const problem = conversationIdProblem(id);
  if (problem) return { refused: `${problem}. This worker keeps no files for it, so the call did not run.` };
  return { dir: path.join(root, id) };
}
