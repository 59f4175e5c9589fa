// Live lines through Temporal: a follower sees the reply word by word before the call completes and
// a command's output before it ends; a worker killed mid-stream gives a retry marker and a whole
// reply; a follower that reconnects resumes from an offset. Real dev server, real worker processes.
import assert from 'node:assert/strict';
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { WorkflowNotFoundError } from '@temporalio/client';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Agent, Conversation, LLM, TerminalTool } from '../../src/client/client.js';
import type { ConversationEvent } from '../../src/core/types.js';
import type { LiveDelta } from '../../src/live/types.js';
import { CHANGE_TOPIC, LIVE_TOPIC, WANTS_MEMO, liveStreamId, type ChangeNotice } from '../../src/live/stream-id.js';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { samePromptSameReply, type Script } from '../../src/testing/scripted-model.js';
import { ROOT, historyText, startHarness, waitFor, type Harness, type WorkerProcess } from '../support/harness.js';

let h: Harness;
let worker: WorkerProcess;
before(async () => {
  h = await startHarness({ name: 'live', script: () => ({ content: 'ok' }) });
  worker = await h.startWorker();
});
after(async () => h?.close());

const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: [TerminalTool] });
const REPLY = 'Streaming words arrive one at a time, long before the whole reply is recorded as an event.';
const isLive = (x: ConversationEvent | LiveDelta): x is LiveDelta => 'live' in x;
const agentMessage = (e: ConversationEvent) => e.kind === 'message' && e.source === 'agent';

test('a follower sees the reply word by word before the model call completes, then the event', async () => {
  h.model.setScript(() => ({ content: REPLY, wordByWord: true, chunkDelayMs: 120 }));
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace: await h.workspace(),
    firstMessage: 'Say something slowly',
    run: true,
  });
  const seen: (ConversationEvent | LiveDelta)[] = [];
  let recordedAtFirstWord: boolean | undefined;
  for await (const item of conversation.follow({ live: true, until: (s) => s.status === 'finished' })) {
    seen.push(item);
    if (isLive(item) && item.kind === 'model_delta' && recordedAtFirstWord === undefined) {
      // The proof that the call is still under way: its reply is not in the event log yet.
      recordedAtFirstWord = (await conversation.events()).some(agentMessage);
    }
  }
  assert.equal(recordedAtFirstWord, false, 'the first words arrived before the reply was recorded');
  const deltas = seen.filter(isLive).filter((d) => d.kind === 'model_delta');
  assert.ok(deltas.length >= 5, `the reply came in pieces (${deltas.length})`);
  assert.equal(deltas.map((d) => d.text).join(''), REPLY);
  assert.ok(deltas.every((d) => d.step === 1 && typeof d.offset === 'number'));
  const replyAt = seen.findIndex((x) => !isLive(x) && agentMessage(x));
  assert.ok(replyAt > seen.indexOf(deltas[deltas.length - 1]!), 'every word before the event that records the reply');
  // Live lines are not events: the log holds its events only, with their indices as before.
  const events = await conversation.events();
  assert.deepEqual(
    seen.filter((x) => !isLive(x)),
    events,
  );
  // The conversation's own history took no event for the deltas.
  const own = historyText(await h.client.workflow.getHandle(conversation.id).fetchHistory());
  assert.ok(!own.includes('__temporal_workflow_stream'), 'no stream signal in the conversation history');
});

test("a command's output is seen while it still runs", async () => {
  const workspace = await h.workspace();
  let turn = 0;
  const script: Script = () =>
    turn++ === 0
      ? {
          toolCalls: [
            { name: 'terminal', arguments: { command: 'echo first-line; while [ ! -f go ]; do sleep 0.05; done; echo second-line' } },
          ],
        }
      : { content: 'done' };
  h.model.setScript(samePromptSameReply(script));
  const conversation = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'Run it', run: true });
  let output = '';
  let toolCallId: string | undefined;
  for await (const item of conversation.follow({ live: true, until: (s) => s.status === 'finished' })) {
    if (!isLive(item) || item.kind !== 'output_delta') continue;
    output += item.text;
    toolCallId = item.toolCallId;
    // The command waits for this file: the output above came while it ran.
    if (output.includes('first-line')) await writeFile(path.join(workspace, 'go'), '');
  }
  assert.match(output, /first-line[\s\S]*second-line/);
  const action = (await conversation.events()).find((e) => e.kind === 'action');
  assert.ok(action && action.kind === 'action' && toolCallId === action.toolCallId, 'output_delta names the tool call');
});

test('nobody following: no stream workflow; a follower who comes mid-command is shown its output from the start', async () => {
  const { conversation, workspace } = await gatedCommand('before-anyone-followed');
  // Nothing was published, nothing started: a conversation nobody follows costs no stream.
  await assert.rejects(h.client.workflow.getHandle(liveStreamId(conversation.id)).describe(), WorkflowNotFoundError);
  const output = await followAndRelease(conversation, workspace, 'before-anyone-followed');
  assert.match(output, /before-anyone-followed[\s\S]*after/);
  // The follower started the stream; the conversation's own history took nothing for it.
  assert.equal((await h.client.workflow.getHandle(liveStreamId(conversation.id)).describe()).type, 'liveStream');
  const own = historyText(await h.client.workflow.getHandle(conversation.id).fetchHistory());
  assert.ok(!own.includes('__temporal_workflow_stream'));
});

test('a script waiting for the conversation gets news, not lines; a reader of lines who comes then sees the command from its start', async () => {
  const { conversation, workspace } = await gatedCommand('printed-while-only-waited');
  const stopped = conversation.waitUntilStopped();
  const stream = h.client.workflow.getHandle(liveStreamId(conversation.id));
  // The waiter started the stream for news alone, and said so where every worker reads it.
  await waitFor('the stream a waiter starts', async () => (await stream.describe()).memo?.[WANTS_MEMO.lines] === false);
  // So the line the command printed is not published while only the waiter reads: the stream is one
  // log (one offset for every topic), and every live line in it comes after where the log stood
  // before a reader of lines came.
  const streamClient = WorkflowStreamClient.create(h.client, liveStreamId(conversation.id));
  const beforeAReader = await streamClient.getOffset();
  const output = await followAndRelease(conversation, workspace, 'printed-while-only-waited');
  assert.match(output, /printed-while-only-waited[\s\S]*after/);
  const lines = (await streamItems(streamClient)).filter((item) => item.topic === LIVE_TOPIC).map((item) => item.offset);
  assert.ok(lines.length > 0, 'the reader of lines was sent them');
  assert.ok(
    lines.every((offset) => offset >= beforeAReader),
    `no line before a reader of lines came (the log stood at ${beforeAReader}): ${lines.join(' ')}`,
  );
  assert.deepEqual((await stream.describe()).memo, { [WANTS_MEMO.lines]: true, [WANTS_MEMO.events]: true });
  assert.equal((await stopped).status, 'finished');
});

test('a script waiting for a stop is told of the stop, not of every step', async () => {
  const workspace = await h.workspace();
  let turn = 0;
  // The first command waits until the test has seen the waiter's stream: the six steps after it are
  // all taken with the stream known to the worker.
  h.model.setScript(() => {
    turn++;
    if (turn === 1)
      return { toolCalls: [{ name: 'terminal', arguments: { command: 'touch started; while [ ! -f go ]; do sleep 0.05; done' } }] };
    return turn <= 7 ? { toolCalls: [{ name: 'terminal', arguments: { command: `echo step ${turn}` } }] } : { content: 'done' };
  });
  const conversation = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'Seven steps', run: true });
  await waitFor('the first command to start', () => existsSync(path.join(workspace, 'started')));
  const stopped = conversation.waitUntilStopped();
  await waitFor(
    'the stream a waiter starts',
    async () => (await h.client.workflow.getHandle(liveStreamId(conversation.id)).describe()).memo?.[WANTS_MEMO.events] === false,
  );
  await writeFile(path.join(workspace, 'go'), '');
  const final = await stopped;
  assert.equal(final.status, 'finished');
  const stream = WorkflowStreamClient.create(h.client, liveStreamId(conversation.id));
  assert.deepEqual((await h.client.workflow.getHandle(liveStreamId(conversation.id)).describe()).memo, {
    [WANTS_MEMO.lines]: false,
    [WANTS_MEMO.events]: false,
  });
  // The stream holds change notices only (nobody read lines): read them all.
  const end = await stream.getOffset();
  const notices: ChangeNotice[] = [];
  for await (const item of stream.subscribe<ChangeNotice>([CHANGE_TOPIC], 0, { resultType: true })) {
    notices.push(item.data);
    if (item.offset + 1 >= end) break;
  }
  // Six steps add a dozen workflow tasks with events: one notice each for a follower of the events.
  assert.ok(notices.length <= 3, `at most the first, a status change and the stop: ${JSON.stringify(notices)}`);
  assert.equal(notices.at(-1)?.status, 'finished');
});

/**
 * A conversation whose one command prints `marker`, then waits for a file `go` in its workspace
 * before it prints `after` (the model then says done); returned once the marker is printed.
 */
async function gatedCommand(marker: string): Promise<{ conversation: Conversation; workspace: string }> {
  const workspace = await h.workspace();
  let turn = 0;
  const command = `echo ${marker}; touch started; while [ ! -f go ]; do sleep 0.05; done; echo after`;
  h.model.setScript(() => (turn++ === 0 ? { toolCalls: [{ name: 'terminal', arguments: { command } }] } : { content: 'done' }));
  const conversation = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'Run it', run: true });
  await waitFor('the command to have printed its first line', () => existsSync(path.join(workspace, 'started')));
  return { conversation, workspace };
}

/** Follows with live lines until the run finishes, letting the command go on once its marker came; the output seen. */
async function followAndRelease(conversation: Conversation, workspace: string, marker: string): Promise<string> {
  let output = '';
  for await (const item of conversation.follow({ live: true, until: (s) => s.status === 'finished' })) {
    if (!isLive(item) || item.kind !== 'output_delta') continue;
    output += item.text;
    if (output.includes(marker) && !existsSync(path.join(workspace, 'go'))) await writeFile(path.join(workspace, 'go'), '');
  }
  return output;
}

test('a worker killed mid-stream: a retry marker, then the whole reply from the new attempt', async () => {
  h.model.setScript(() => ({ content: REPLY, wordByWord: true, chunkDelayMs: 150 }));
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace: await h.workspace(),
    firstMessage: 'Say it again',
    run: true,
  });
  const seen: LiveDelta[] = [];
  let killed = false;
  for await (const item of conversation.follow({ live: true, until: (s) => s.status === 'finished' })) {
    if (!isLive(item)) continue;
    seen.push(item);
    if (!killed && item.kind === 'model_delta') {
      killed = true;
      await worker.kill('SIGKILL');
      worker = await h.startWorker();
    }
  }
  const retry = seen.findIndex((d) => d.kind === 'retry');
  assert.ok(retry > 0, 'a retry marker after the first words');
  assert.equal(seen[retry]!.step, 1);
  assert.ok((seen[retry]!.attempt ?? 0) >= 2);
  const after = seen.slice(retry + 1).filter((d) => d.kind === 'model_delta');
  assert.equal(after.map((d) => d.text).join(''), REPLY, 'the new attempt streams the whole reply');
  const reply = (await conversation.events()).find(agentMessage);
  assert.ok(reply && reply.kind === 'message' && reply.text === REPLY);
});

test('a follower that reconnects resumes from an offset: nothing twice, nothing lost', async () => {
  h.model.setScript(() => ({ content: REPLY, wordByWord: true, chunkDelayMs: 100 }));
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace: await h.workspace(),
    firstMessage: 'Once more',
    run: true,
  });
  const first: LiveDelta[] = [];
  let nextEvent = 0;
  const stop = new AbortController();
  for await (const item of conversation.follow({ live: true, signal: stop.signal })) {
    if (!isLive(item)) {
      nextEvent = item.index + 1;
      continue;
    }
    first.push(item);
    if (first.filter((d) => d.kind === 'model_delta').length >= 3) stop.abort();
  }
  const last = first[first.length - 1]!;
  const second: LiveDelta[] = [];
  for await (const item of conversation.follow({
    live: true,
    fromIndex: nextEvent,
    liveFrom: last.offset + 1,
    until: (s) => s.status === 'finished',
  })) {
    if (isLive(item)) second.push(item);
  }
  const all = [...first, ...second].filter((d) => d.kind === 'model_delta');
  assert.equal(all.map((d) => d.text).join(''), REPLY);
  assert.ok(second.every((d) => d.offset > last.offset));
  // The stream lives in a workflow of its own.
  const stream = await h.client.workflow.getHandle(liveStreamId(conversation.id)).describe();
  assert.equal(stream.type, 'liveStream');
});

test('a follower that comes late is shown the step under way from its start; after the run, no stale lines', async () => {
  h.model.setScript(() => ({ content: REPLY, wordByWord: true, chunkDelayMs: 150 }));
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace: await h.workspace(),
    firstMessage: 'And again',
    run: true,
  });
  // Wait (through a first follower) until part of the reply has streamed.
  const early = new AbortController();
  let words = 0;
  for await (const item of conversation.follow({ live: true, signal: early.signal })) {
    if (isLive(item) && item.kind === 'model_delta' && ++words >= 4) early.abort();
  }
  const late: LiveDelta[] = [];
  for await (const item of conversation.follow({ live: true, until: (s) => s.status === 'finished' })) if (isLive(item)) late.push(item);
  assert.equal(
    late
      .filter((d) => d.kind === 'model_delta')
      .map((d) => d.text)
      .join(''),
    REPLY,
    'the late follower saw the reply from its first word',
  );
  // Once it has finished, a new follower gets the events only.
  const after: (ConversationEvent | LiveDelta)[] = [];
  for await (const item of conversation.follow({ live: true, until: (s) => s.status === 'finished' })) after.push(item);
  assert.equal(after.filter(isLive).length, 0);
  assert.equal(after.length, (await conversation.events()).length);
});

test('faheem events --follow --json prints live lines beside the events; without --json the reply as it streams', async () => {
  // The reply waits until both CLI processes are following (each has printed the first event).
  let release!: () => void;
  const following = new Promise<void>((r) => (release = r));
  h.model.setScript(() => following.then(() => ({ content: REPLY, wordByWord: true, chunkDelayMs: 100 })));
  const conversation = await Conversation.create(h.client, {
    agent: agent(),
    workspace: await h.workspace(),
    firstMessage: 'Through the CLI',
    run: true,
  });
  const cli = (args: string[]) => {
    const p = execa('node', [path.join(ROOT, 'bin/faheem.js'), ...args], { cwd: ROOT, env: h.env, reject: false });
    let out = '';
    p.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    return { done: p, out: () => out };
  };
  const jsonCli = cli(['events', conversation.id, '--follow', '--until-stop', '--json']);
  const textCli = cli(['events', conversation.id, '--follow', '--until-stop']);
  await waitFor('both CLIs following', () => jsonCli.out().includes('"index":0') && textCli.out().includes('Through the CLI'), 60_000);
  release();
  const [json, text] = await Promise.all([jsonCli.done, textCli.done]);
  // As text: the reply as it streamed, then the event that records it.
  assert.equal(String(text.stdout).split(REPLY).length - 1, 2, String(text.stdout));
  const lines = String(json.stdout)
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const live = lines.filter((l) => l.live === true);
  assert.ok(live.length >= 3, 'live lines printed');
  assert.ok(live.every((l) => l.index === undefined && typeof l.text === 'string' && typeof l.kind === 'string'));
  assert.equal(
    live
      .filter((l) => l.kind === 'model_delta')
      .map((l) => l.text)
      .join(''),
    REPLY,
  );
  const events = lines.filter((l) => l.live === undefined);
  assert.deepEqual(
    events.map((e) => e.index),
    (await conversation.events()).map((e) => e.index),
  );
  // Durable lines are unchanged: `events --json` without --follow prints the same events.
  const plain = await h.cli(['events', conversation.id, '--json']);
  assert.deepEqual(
    plain.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown),
    events,
  );
});

/** Every item in a live stream's log so far, in order (offsets and topics). */
async function streamItems(stream: WorkflowStreamClient): Promise<{ topic: string; offset: number }[]> {
  const end = await stream.getOffset();
  const items: { topic: string; offset: number }[] = [];
  if (end === 0) return items;
  for await (const item of stream.subscribe(undefined, 0)) {
    items.push({ topic: item.topic, offset: item.offset });
    if (item.offset + 1 >= end) break;
  }
  return items;
}
