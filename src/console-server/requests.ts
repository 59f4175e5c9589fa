// What the console's API accepts (zod) and how an error becomes an HTTP answer: pure, unit-tested.
import path from 'node:path';
import { z } from 'zod';
import { conversationIdProblem } from '../conversation/conversation-id.js';
import { FaheemError, HttpError } from '../core/errors.js';
import { CONVERSATION_STATUSES, DEFAULTS, type ConfirmationPolicy } from '../core/types.js';
import { checkMessageText } from '../conversation/workflow/messages.js';
import { TENANT_NAME } from '../client/tenants.js';

/** The largest request body the console reads (a message at its longest, as JSON, with room to spare). */
export const MAX_BODY_BYTES = DEFAULTS.maxMessageChars * 6 + 4096;

/** A conversation id as the console accepts it in a path: a valid one (conversation-id.ts), sub-agents' included. */
export const conversationId = z.string().superRefine((id, ctx) => {
  const problem = conversationIdProblem(id);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** `GET /api/conversations` query: status filter, page size and the page token of the previous page. */
export const listQuery = z.object({
  status: z.enum(CONVERSATION_STATUSES).optional(),
  pageSize: z.coerce.number().int().min(1).max(200).default(50),
  pageToken: z
    .string()
    .max(4096)
    .regex(/^[A-Za-z0-9_-]*$/, 'not a page token')
    .optional(),
  /** Words the title, id or workspace must all contain. */
  q: z.string().max(200).optional(),
  /** Only this tenant's conversations (a tenant name: src/client/tenants.ts). */
  tenant: z.string().regex(TENANT_NAME, 'not a tenant name').optional(),
});

/** An empty text box is no value. */
const blankIsNone = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);

/**
 * `POST /api/conversations`: the "New conversation" form, what `faheem start` takes. The message
 * follows the workflow's own rule; the workspace is an absolute path (the console's own working
 * directory means nothing in a browser); model and id may be left empty (the worker's model, a
 * generated id).
 */
export const newConversationBody = z
  .object({
    message: z.string().superRefine((text, ctx) => {
      try {
        checkMessageText(text);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    }),
    workspace: z
      .string()
      .trim()
      .min(1, 'say which folder the agent works in')
      .max(4096)
      .refine((p) => path.isAbsolute(p), 'give the folder as an absolute path (it starts with /)'),
    model: z.preprocess(
      blankIsNone,
      z
        .string()
        .trim()
        .max(200)
        .regex(/^[^\s]+$/, 'a model name has no spaces (e.g. openai/gpt-4o)')
        .optional(),
    ),
    confirm: z.enum(['never', 'always', 'risky'] as const satisfies readonly ConfirmationPolicy[]).default('never'),
    id: z.preprocess(
      blankIsNone,
      z
        .string()
        .trim()
        .superRefine((id, ctx) => {
          const problem = conversationIdProblem(id, 'new');
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        })
        .optional(),
    ),
  })
  .strict();

/** The form's fields, checked. */
export type NewConversation = z.infer<typeof newConversationBody>;

/** `GET /api/conversations/:id/follow` query: the first event index and live offset wanted. */
export const followQuery = z.object({
  from: z.coerce.number().int().min(0).default(0),
  liveFrom: z.coerce.number().int().min(0).optional(),
});

/** The body each action takes. */
export const actionBodies = {
  pause: z.object({ now: z.boolean().optional() }).strict(),
  resume: z.object({}).strict(),
  send: z.object({ text: z.string().min(1).max(DEFAULTS.maxMessageChars), run: z.boolean().optional() }).strict(),
  approve: z.object({}).strict(),
  reject: z.object({ reason: z.string().max(10_000).optional() }).strict(),
  close: z.object({}).strict(),
} as const;

/** The actions the console's buttons call. */
export type ActionName = keyof typeof actionBodies;

/** Whether `name` is one of the console's actions. */
export function isAction(name: string): name is ActionName {
  return Object.prototype.hasOwnProperty.call(actionBodies, name);
}

/** An error answered with a status and `{ error }` (the package's one HTTP error, from src/core/errors.ts). */
export { HttpError } from '../core/errors.js';

/** The first problem zod found, as one line: `field: message`. */
export function zodMessage(err: z.ZodError): string {
  const issue = err.issues[0];
  if (!issue) return 'invalid request';
  return issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
}

/** Parses `value` with `schema`, or throws a 400 HttpError that names the problem. */
export function parseOr400<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new HttpError(400, zodMessage(r.error));
  return r.data;
}

/**
 * The status and message an error is answered with: the package's own errors by code (a missing
 * conversation 404, a closed one or a refused request 409, no worker 503, …); anything else 500
 * with its message (never a stack).
 */
export function errorAnswer(err: unknown): { status: number; error: string } {
  if (err instanceof HttpError) return { status: err.status, error: err.message };
  if (err instanceof FaheemError) {
    switch (err.code) {
      case 'conversation_not_found':
        return { status: 404, error: err.message };
      case 'conversation_closed':
      case 'invalid_request':
      case 'usage':
        return { status: 409, error: err.message };
      case 'no_worker':
      case 'timeout':
        return { status: 503, error: err.message };
      case 'server_unreachable':
        return { status: 502, error: err.message };
      case 'decryption':
      case 'encryption_config':
        return { status: 500, error: err.message };
      default:
        return { status: 500, error: err.message };
    }
  }
  const message = err instanceof Error ? err.message : String(err);
  return { status: 500, error: message.length > 500 ? `${message.slice(0, 500)}…` : message };
}
