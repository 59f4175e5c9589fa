// `faheem checkpoints`, `faheem rewind`, `faheem fork`: time travel with the workspace.
import type { Client } from '@temporalio/client';
import { Command } from 'commander';
import pc from 'picocolors';
import type { Conversation } from '../client/client.js';
import { forkConversation } from '../time-travel/fork.js';
import { checkConversationId } from '../conversation/conversation-id.js';

/** Ids given on the command line, checked before anything connects. */
const conversationIdArg = (value: string) => checkConversationId(value);
const newConversationIdArg = (value: string) => checkConversationId(value, 'new');

/** What the time-travel commands borrow from the CLI's entry point. */
export interface TimeTravelDeps {
  withClient<T>(fn: (client: Client) => Promise<T>): Promise<T>;
  withConversation(id: string, fn: (conversation: Conversation) => Promise<void>): Promise<void>;
  answered<T>(promise: Promise<T>): Promise<T>;
  nonNegativeInt(value: string): number;
}

/** The three commands, to add to the program. */
export function timeTravelCommands(deps: TimeTravelDeps): Command[] {
  const checkpoints = new Command('checkpoints')
    .description('the workspace checkpoints of a conversation, one per step (step 0: before the first step)')
    .argument('<id>', 'the conversation id', conversationIdArg)
    .option('--json', 'one JSON object a line')
    .action(async (id: string, o: { json?: boolean }) => {
      await deps.withConversation(id, async (conversation) => {
        for (const c of await conversation.checkpoints()) {
          if (o.json) {
            console.log(JSON.stringify(c));
            continue;
          }
          const files = c.commit ? `+${c.added} ~${c.changed} -${c.deleted}` : pc.red('not taken');
          const mark = c.rewound ? pc.dim(' (rewound)') : '';
          console.log(
            `step ${String(c.step).padStart(3)}  #${String(c.index).padEnd(5)} ${pc.dim(c.time)}  ${files}  ${pc.dim(c.commit?.slice(0, 10) ?? '')}${mark}`,
          );
        }
      });
    });
  const rewind = new Command('rewind')
    .description('put the workspace and the conversation back as after step N (later steps stay readable, marked rewound); then paused')
    .argument('<id>', 'the conversation id', conversationIdArg)
    .requiredOption('--to <step>', 'the step to go back to (0: before the first step)', deps.nonNegativeInt)
    .action(async (id: string, o: { to: number }) => {
      await deps.withConversation(id, async (conversation) => {
        const answer = await deps.answered(conversation.rewind(o.to));
        console.error(
          `rewound to step ${answer.toStep}: ${answer.dropped} events left the prompt; the workspace is as after step ${answer.toStep}. ` +
            `Undo: its state just before is checkpoint ${answer.before.slice(0, 12)}. The conversation is paused: send or resume to go on.`,
        );
      });
    });
  const fork = new Command('fork')
    .description('a new conversation holding steps 1..N, in its own copy of the workspace as of step N; prints its id')
    .argument('<id>', 'the conversation id', conversationIdArg)
    .requiredOption('--at <step>', 'the step to fork at', deps.nonNegativeInt)
    .option('--id <new>', "the new conversation's id (default: generated)", newConversationIdArg)
    .option('--workspace <dir>', 'its workspace (default: a sibling of the original named after the new id)')
    .action(async (id: string, o: { at: number; id?: string; workspace?: string }) => {
      await deps.withClient(async (client) => {
        const forked = await forkConversation(client, id, {
          at: o.at,
          ...(o.id ? { id: o.id } : {}),
          ...(o.workspace ? { workspace: o.workspace } : {}),
        });
        console.log(forked.id);
      });
    });
  return [checkpoints, rewind, fork];
}
