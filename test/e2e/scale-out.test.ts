// Scale-out, shown: two worker processes share one task queue; 100 conversations run across them;
// one worker is SIGKILLed mid-run; every conversation finishes on the survivor, no step runs twice.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM } from '../../src/client/client.js';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/scripted-model.js';
import { startHarness, waitFor, type Harness } from '../support/harness.js';

const CONVERSATIONS = 100;
const STEPS = 3;

let h: Harness;
before(async () => {
  h = await startHarness({ name: 'scale-out', script: () => ({ content: 'ok' }), record: false });
});
after(async () => h?.close());

test(`${CONVERSATIONS} conversations on two workers; one killed mid-run; all finish, no step twice`, async () => {
  h.model.setScript((req: RecordedRequest): ScriptedReply => {
    const done = req.body.messages.filter((m) => m.role === 'tool').length;
    return done < STEPS
      ? { delayMs: 100, toolCalls: [{ name: 'terminal', arguments: { command: `echo step${done + 1} >> out.txt` } }] }
      : { delayMs: 100, content: 'done' };
  });
  const [a, b] = [await h.startWorker(), await h.startWorker()];
  const agent = new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] });
  const conversations = await Promise.all(
    Array.from({ length: CONVERSATIONS }, async (_, i) => {
      const workspace = await h.workspace();
      const conversation = await Conversation.create(h.client, {
        agent,
        workspace,
        id: `scale-${Date.now()}-${i}`,
        firstMessage: `job ${i}`,
        run: true,
        // With the defaults: a checkpoint each step (every step here changes a file) and live lines on.
      });
      return { conversation, workspace };
    }),
  );
  const total = CONVERSATIONS * (STEPS + 1);
  await waitFor('the run to be half way', () => h.model.requests.length >= total / 2, 120_000, 50);
  const before = h.model.requests.length;
  await a.kill('SIGKILL');
  const started = Date.now();
  // One wait on each workflow (not a query every 200 ms from 100 pollers, which would load the
  // server and the survivor more than the conversations do); a deadline for a loaded machine.
  const finals = await Promise.all(conversations.map(({ conversation }) => conversation.waitUntilStopped({ timeoutMs: 600_000 })));
  const ms = Date.now() - started;
  const unfinished = conversations.flatMap(({ conversation }, i) =>
    finals[i]!.status === 'finished' ? [] : [{ conversation, state: finals[i]! }],
  );
  assert.deepEqual(
    await Promise.all(
      unfinished.map(
        async ({ conversation, state }) =>
          `${conversation.id} ${state.status}: ${state.lastError}\n  ${await activityAttempts(conversation.id)}`,
      ),
    ),
    [],
    `every conversation finished (each other one with its error and its activities' attempts; the killed worker was pid ${a.process.pid})`,
  );
  assert.ok(h.model.requests.length > before, 'the survivor carried on');
  let reported = 0;
  for (const { conversation, workspace } of conversations) {
    const lines = (await readFile(path.join(workspace, 'out.txt'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
    const events = await conversation.events();
    // (On failure, what the conversation recorded: which calls ran where, and what was reported.)
    const told = () =>
      events
        .map((e) =>
          e.kind === 'action'
            ? `action ${e.toolCallId} ${JSON.stringify(e.arguments)}`
            : e.kind === 'observation'
              ? `observation ${e.toolCallId} ${e.content.slice(0, 80)}`
              : e.kind,
        )
        .join('\n  ');
    assert.deepEqual(lines, [...new Set(lines)], `${conversation.id}: a step ran twice: ${lines.join(',')}\n  ${told()}`);
    reported += events.filter((e) => e.kind === 'observation' && /effects are unknown/.test(e.content)).length;
    // A command cut off by the kill may or may not have run; it is reported, and never run again.
    const unknown = events.filter((e) => e.kind === 'observation' && /effects are unknown/.test(e.content)).length;
    assert.ok(lines.length <= STEPS && lines.length + unknown >= STEPS, `${conversation.id}: ${lines.length} ran, ${unknown} reported`);
  }
  console.log(
    `# ${CONVERSATIONS} conversations finished ${ms} ms after the kill; ${reported} command(s) cut off by it were reported, none run twice`,
  );
  await b.kill();
});

/** Each activity of a conversation's history that was tried more than once or failed: its attempts, worker and failure. */
async function activityAttempts(id: string): Promise<string> {
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  const lines: string[] = [];
  for (const e of history.events ?? []) {
    const started = e.activityTaskStartedEventAttributes;
    if (started && (started.attempt ?? 1) > 1)
      lines.push(
        `#${String(e.eventId)} attempt ${started.attempt} on ${started.identity}, the last one's failure: ${started.lastFailure?.message}`,
      );
    const timedOut = e.activityTaskTimedOutEventAttributes;
    if (timedOut)
      lines.push(
        `#${String(e.eventId)} timed out: ${timedOut.failure?.message} (${timedOut.failure?.cause?.message ?? ''}), retry ${timedOut.retryState}`,
      );
    const failed = e.activityTaskFailedEventAttributes;
    if (failed) lines.push(`#${String(e.eventId)} failed on ${failed.identity}: ${failed.failure?.message}, retry ${failed.retryState}`);
  }
  return lines.join('\n  ');
}
