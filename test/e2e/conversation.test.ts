// Conversations on one real dev server and one real worker process (a scripted model, set per
// section): watching a conversation writes nothing to it; model failures, a hostile model, pause
// --now, close; waiting on change notices; hooks and skills; a long conversation over
// continue-as-new; a wait whose worker is killed and replaced. The sections share the worker (their
// worker settings are the same), each with conversations of its own; the model's script is set by
// each section. The workflow's own rules (limits, messages while running, a context-window overflow,
// what ends a wait) are tested in process in test/workflow/.
import assert from 'node:assert/strict';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { Agent, Conversation, LLM, TerminalTool } from '../../src/client/client.js';
import type { HooksConfig } from '../../src/hooks/config.js';
import { ChangeWaiter } from '../../src/live/change-waiter.js';
import { LIVE_DIVISION, liveStreamId } from '../../src/live/stream-id.js';
import type { LiveDelta } from '../../src/live/types.js';
import { retryAfterMs } from '../../src/models/client.js';
import { samePromptSameReply, type RecordedRequest, type Script, type ScriptedReply } from '../../src/testing/scripted-model.js';
import { dataConverter } from '../../src/storage/local-payloads.js';
import type { ConversationEvent, ObservationEvent } from '../../src/core/types.js';
import { FAKE_KEY, historyText, startHarness, waitFor, type Harness, type WorkerProcess } from '../support/harness.js';
import { storeSettings } from '../../src/settings/store.js';

let h: Harness;
let worker: WorkerProcess;
before(async () => {
  h = await startHarness({ name: 'conversation', script: () => ({ content: 'ok' }) });
  worker = await h.startWorker();
});
after(async () => h?.close());

// Watching a conversation writes nothing to it, and the namespace's list holds conversations only:
// two followers attached for a whole run write no event into its history (as many updates and
// signals as the same run unobserved: they wait on change notices on the live stream); the
// stream workflows stay out of the default list; the summary carries the title and each model
// call's summary the worker's model. Real dev server, real worker process, scripted model.
describe('observers', () => {
  const STEPS = 4;
  /** Four steps of one command each, then a reply; the same prompt gives the same reply. */
  const script: Script = (req) => {
    const done = req.body.messages.filter((m) => m.role === 'tool').length;
    return done < STEPS
      ? {
          content: `Step ${done + 1} of ${STEPS}.`,
          wordByWord: true,
          toolCalls: [{ name: 'terminal', arguments: { command: `echo step-${done + 1}` } }],
        }
      : { content: 'All four steps are done.', wordByWord: true };
  };

  /** The conversation's agent: no model named, so the worker's LLM_MODEL answers. */
  const agent = () => new Agent({ llm: new LLM({}), tools: [TerminalTool] });

  /** Starts a conversation that waits (idle) for `run`. */
  async function idleConversation(message: string): Promise<Conversation> {
    return Conversation.create(h.client, { agent: agent(), workspace: await h.workspace(), firstMessage: message });
  }

  /** Runs it to the end, watched by nobody: only queries, which write no history. */
  async function runUnobserved(conversation: Conversation): Promise<void> {
    await conversation.resume();
    await waitFor('the run to finish', async () => (await conversation.state()).status === 'finished', 120_000, 100);
  }

  /**
   * The history's events by type. An observer could write a conversation's history only through an
   * update, a signal or a cancellation request: those are `written`. The rest (workflow tasks, timers,
   * activities) follow the run and the machine's pace: a busy server batches less, so two runs of the
   * same script may differ there by a few events whoever watches.
   */
  async function historyLength(id: string): Promise<{ written: number; all: number; types: Record<string, number> }> {
    const events = (await h.client.workflow.getHandle(id).fetchHistory()).events ?? [];
    const types: Record<string, number> = {};
    let written = 0;
    for (const e of events) {
      const type = Object.keys(e).find((k) => k.endsWith('EventAttributes') && e[k as keyof typeof e]) ?? 'unknown';
      types[type] = (types[type] ?? 0) + 1;
      if (/^workflowExecution(Update|Signaled|CancelRequested)/.test(type)) written++;
    }
    return { written, all: events.length, types };
  }

  test('two followers attached for a whole run add no event to its history', async (t) => {
    h.model.setScript(script);
    const alone = await idleConversation('Run four steps');
    await runUnobserved(alone);
    const unobserved = await historyLength(alone.id);

    const watched = await idleConversation('Run four steps');
    const finished = (s: { status: string }) => s.status === 'finished';
    const live: (ConversationEvent | LiveDelta)[] = [];
    const plain: ConversationEvent[] = [];
    const followers = [
      (async () => {
        for await (const item of watched.follow({ live: true, until: finished })) live.push(item);
      })(),
      (async () => {
        for await (const item of watched.follow({ until: finished })) plain.push(item);
      })(),
    ];
    // Both attached before the run: the live follower's stream runs (it started it).
    await waitFor('the live stream to run', () =>
      h.client.workflow
        .getHandle(liveStreamId(watched.id))
        .describe()
        .then(
          (d) => d.status.name === 'RUNNING',
          () => false,
        ),
    );
    await watched.resume();
    await Promise.all(followers);

    const events = await watched.events();
    assert.deepEqual(plain, events, 'the plain follower saw every event');
    assert.deepEqual(
      live.filter((x) => !('live' in x)),
      events,
      'the live follower saw every event',
    );
    // (Its live lines are live.test.ts's subject: these replies come whole at once.)
    t.diagnostic(`live lines seen: ${live.filter((x) => 'live' in x).length}`);
    const observed = await historyLength(watched.id);
    t.diagnostic(`history events: watched ${observed.all}, unwatched ${unobserved.all}`);
    assert.equal(
      observed.written,
      unobserved.written,
      `events a client writes (updates, signals): watched ${observed.written}, unwatched ${unobserved.written}\n` +
        `watched ${JSON.stringify(observed.types)}\nunwatched ${JSON.stringify(unobserved.types)}`,
    );
    // Nothing of the followers' in it: the only update is the run that started it.
    const history = await h.client.workflow.getHandle(watched.id).fetchHistory();
    const updates = (history.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
    assert.deepEqual(
      updates.map((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name),
      ['run'],
    );
  });

  test('the namespace lists conversations only: the live streams are in a division of their own', async () => {
    h.model.setScript(script);
    const ids: string[] = [];
    for (let i = 1; i <= 3; i++) {
      const conversation = await idleConversation(`Listed conversation ${i}`);
      ids.push(conversation.id);
      await conversation.resume();
      // Followed to the end, so each has its stream workflow.
      for await (const item of conversation.follow({ live: true, until: (s) => s.status === 'finished' })) void item;
      const stream = await h.client.workflow.getHandle(liveStreamId(conversation.id)).describe();
      assert.equal(stream.type, 'liveStream');
    }
    const listed = async (query?: string) => {
      const rows: { id: string; type: string }[] = [];
      for await (const w of h.client.workflow.list(query ? { query } : {})) rows.push({ id: w.workflowId, type: w.type });
      return rows;
    };
    // The default list (the Web UI's, `temporal workflow list`): conversations, no stream.
    await waitFor('the conversations to be listed', async () => {
      const rows = await listed();
      return ids.every((id) => rows.some((r) => r.id === id));
    });
    const rows = await listed();
    assert.deepEqual(
      rows.filter((r) => r.type !== 'conversation'),
      [],
      'only conversations in the default list',
    );
    assert.equal((await h.client.workflow.count()).count, rows.length);
    // The streams are there for whoever names their division.
    const streams = await listed(`TemporalNamespaceDivision = '${LIVE_DIVISION}'`);
    for (const id of ids)
      assert.ok(
        streams.some((r) => r.id === liveStreamId(id)),
        `${id}'s stream is in the division`,
      );
  });

  test("the Web UI's summaries: the title on the conversation, the worker's model on each model call", async () => {
    h.model.setScript(script);
    const conversation = await idleConversation('Count to four with echo\nthen say done');
    await runUnobserved(conversation);
    const handle = h.client.workflow.getHandle(conversation.id);
    const description = await handle.describe();
    assert.equal(await description.staticSummary(), 'Count to four with echo then say done');
    const history = await handle.fetchHistory();
    const summaries = await Promise.all(
      (history.events ?? [])
        .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
        .map(async (e) => String(await h.client.options.loadedDataConverter.payloadConverter.fromPayload(e.userMetadata!.summary!))),
    );
    // The conversation names no model: the worker's (the harness's LLM_MODEL) is the one shown.
    assert.deepEqual(
      summaries,
      Array.from({ length: STEPS + 1 }, (_, i) => `LLM openai/gpt-4o-mini · step ${i + 1}`),
    );
  });
});

// Conversation semantics against a real server and worker: model failures (the real model client's
// errors), a hostile model (the real tools' refusals), pause --now (a real command cut off), close.
describe('model failures, a hostile model, pause --now, close', () => {
  const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal', 'file_editor', 'task_tracker'] });

  async function runWith(script: Script, message = 'Go', extra: { maxIterations?: number } = {}) {
    // Scripts count their turns: a prompt asked again (a retried call) gets the same reply, not the next turn's.
    h.model.setScript(samePromptSameReply(script));
    const workspace = await h.workspace();
    const conversation = await Conversation.create(h.client, { agent: agent(), workspace, ...extra });
    await conversation.sendMessage(message);
    const final = await conversation.run().then(() => conversation.state());
    return { conversation, final, workspace, events: await conversation.events() };
  }

  test('HTTP 401 puts the conversation in error with a readable reason, without retrying', async () => {
    const start = h.model.requests.length;
    const { final } = await runWith(() => ({ status: 401, error: `Incorrect API key provided: ${FAKE_KEY}` }));
    assert.equal(final.status, 'error');
    assert.match(final.lastError ?? '', /HTTP 401/);
    assert.ok(!(final.lastError ?? '').includes(FAKE_KEY), 'the key is masked in the error');
    assert.equal(h.model.requests.length - start, 1, 'a 401 is not retried');
  });

  test('HTTP 500 on the first attempts is retried and the run finishes', async () => {
    let calls = 0;
    const { final, events } = await runWith(() => (++calls <= 2 ? { status: 500, error: 'overloaded' } : { content: 'All done.' }));
    assert.equal(final.status, 'finished');
    assert.equal(calls, 3);
    assert.ok(events.some((e) => e.kind === 'message' && e.source === 'agent' && e.text === 'All done.'));
  });

  test('HTTP 429 with Retry-After is asked again when the provider said, not on our backoff', async () => {
    const start = h.model.requests.length;
    let calls = 0;
    const { final, conversation } = await runWith(() =>
      ++calls === 1 ? { status: 429, error: 'rate limited', headers: { 'retry-after': '2' } } : { content: 'All done.' },
    );
    assert.equal(final.status, 'finished');
    assert.ok(h.model.requests.length - start >= 2);
    // The provider's delay went to Temporal as the retry's delay (our own first backoff is 0.5 s): the
    // second attempt's start records the first one's failure with it. (Asserted in history, not by the clock.)
    const history = await h.client.workflow.getHandle(conversation.id).fetchHistory();
    const retried = (history.events ?? []).find(
      (e) => (e.activityTaskStartedEventAttributes?.attempt ?? 0) > 1,
    )?.activityTaskStartedEventAttributes;
    const delay = retried?.lastFailure?.applicationFailureInfo?.nextRetryDelay;
    assert.equal(Number(delay?.seconds ?? 0) + (delay?.nanos ?? 0) / 1e9, 2, JSON.stringify(retried?.lastFailure));
    assert.equal(retryAfterMs(new Headers({ 'retry-after-ms': '1500' })), 1500);
    assert.ok((retryAfterMs(new Headers({ 'retry-after': new Date(Date.now() + 60_000).toUTCString() })) ?? 0) > 50_000, 'an HTTP date');
    assert.equal(retryAfterMs(new Headers({ 'retry-after': '86400' })), 120_000, 'capped');
    assert.equal(retryAfterMs(new Headers({ 'retry-after': 'soon' })), undefined);
    assert.equal(retryAfterMs(new Headers({ 'retry-after-ms': ' ', 'retry-after': '3' })), 3000, 'a blank header is absent');
    assert.equal(retryAfterMs(undefined), undefined);
  });

  test('a hostile model never wedges the conversation: each bad call becomes an error observation', async () => {
    const bad = [
      { name: 'launch_missiles', arguments: { now: true } },
      { name: 'terminal', arguments: '{"command": "echo unterminated' },
      { name: 'terminal', arguments: { timeout: 5 } },
      { name: 'file_editor', arguments: { command: 'view', path: '/etc/passwd' } },
      { name: 'file_editor', arguments: { command: 'create', path: '../../outside.txt', file_text: 'x' } },
      { name: 'file_editor', arguments: { command: 'view' } },
      { name: 'task_tracker', arguments: { command: 'plan', task_list: [{ nope: 1 }] } },
      { name: 'terminal', arguments: '[1,2]' },
    ];
    let turn = 0;
    const { final, events } = await runWith(() => (turn++ === 0 ? { toolCalls: bad } : { content: 'I give up.' }));
    assert.equal(final.status, 'finished');
    const observations = events.filter((e): e is ObservationEvent => e.kind === 'observation');
    assert.equal(observations.length, bad.length);
    for (const o of observations) assert.equal(o.isError, true, `${o.tool}: ${o.content}`);
    assert.match(observations[0]!.content, /Unknown tool "launch_missiles"/);
    assert.match(observations[1]!.content, /not valid JSON/);
    assert.match(observations[7]!.content, /must be a JSON object/);
    assert.match(observations[2]!.content, /command/);
    assert.match(observations[3]!.content, /outside the workspace/);
    assert.match(observations[4]!.content, /outside the workspace/);
    // The model saw every error (the next request carried all eight results).
    const next = h.model.requests[h.model.requests.length - 1]!.body.messages;
    assert.equal(next.filter((m) => m.role === 'tool').length, bad.length);
  });

  test('pause --now interrupts the running command and keeps its partial output', async () => {
    let turn = 0;
    h.model.setScript(
      samePromptSameReply(() =>
        turn++ === 0
          ? {
              toolCalls: [
                { name: 'terminal', arguments: { command: 'echo first-part; touch started; sleep 60; echo never' } },
                { name: 'think', arguments: { thought: 'x' } },
              ],
            }
          : { content: 'Stopped as asked.' },
      ),
    );
    const workspace = await h.workspace();
    const conversation = await Conversation.create(h.client, { agent: agent(), workspace });
    await conversation.sendMessage('Run the long command');
    const running = conversation.run();
    await waitFor('the command running', () =>
      readFile(path.join(workspace, 'started')).then(
        () => true,
        () => false,
      ),
    );
    await conversation.pause({ now: true });
    const stopped = await running;
    assert.equal(stopped.status, 'paused');
    const obs = await waitFor('two observations', async () => {
      const o = (await conversation.events()).filter((e): e is ObservationEvent => e.kind === 'observation');
      return o.length === 2 && o;
    });
    assert.match(obs[0]!.content, /interrupted by a pause/);
    assert.match(obs[0]!.content, /first-part/);
    assert.doesNotMatch(obs[0]!.content, /never/);
    assert.match(obs[1]!.content, /Not run: the conversation was paused/);
    const resumed = await conversation.run();
    assert.equal(resumed.status, 'finished');
  });

  test('close ends the workflow; its state stays readable', async () => {
    const { conversation } = await runWith(() => ({ content: 'hi' }));
    await conversation.close();
    await waitFor('closed', () => conversation.isClosed());
    const s = await conversation.state();
    assert.equal(s.closed, true);
    await assert.rejects(conversation.resume());
  });

  test('a file created by the agent lands in the workspace; terminal state carries across steps', async () => {
    let turn = 0;
    const steps = [
      { toolCalls: [{ name: 'terminal', arguments: { command: 'mkdir -p app && cd app && export NAME=faheem' } }] },
      { toolCalls: [{ name: 'terminal', arguments: { command: 'echo "hello $NAME" > greeting.txt' } }] },
      { content: 'done' },
    ];
    const { workspace, final } = await runWith(() => steps[Math.min(turn++, 2)]!);
    assert.equal(final.status, 'finished');
    assert.equal(await readFile(path.join(workspace, 'app', 'greeting.txt'), 'utf8'), 'hello faheem\n');
    assert.equal(final.terminal.cwd, path.join(workspace, 'app'));
  });
});

// Clients wait for the change notices on the conversation's live stream, not by polling queries and
// not with updates on the conversation (which its history would keep): a run that takes seconds
// costs the conversation one update (run) and a couple of queries, whatever its length.
describe('waiting on change notices', () => {
  // Waits for news that ended with no notice (the fallback: no notice for 1 s, growing to 10 s). The
  // client asks the state once after each wait, so its queries are counted against its waits, not
  // against the time the run took (how long the silences are is test/unit/live/change-waiter.test.ts's).
  let silentWaits = 0;
  const wait = ChangeWaiter.prototype.wait;
  before(async () => {
    ChangeWaiter.prototype.wait = async function (this: ChangeWaiter, ...args: Parameters<ChangeWaiter['wait']>) {
      const notice = await wait.apply(this, args);
      if (notice === undefined) silentWaits++;
      return notice;
    };
  });
  after(() => {
    ChangeWaiter.prototype.wait = wait;
  });

  test('run() and follow() wait on change notices: a couple of calls on the conversation however long the run takes', async () => {
    // Calls on the conversation's workflow; the stream's long polls (one per notice) are counted apart.
    const calls = { query: 0, update: 0, streamPolls: 0 };
    let conversationId = '';
    const counter: WorkflowClientInterceptor = {
      async query(input, next) {
        if (input.workflowExecution.workflowId === conversationId) calls.query++;
        return next(input);
      },
      async startUpdate(input, next) {
        if (input.workflowExecution.workflowId === conversationId) calls.update++;
        else calls.streamPolls++;
        return next(input);
      },
    };
    const client = new Client({
      connection: h.client.connection,
      namespace: h.namespace,
      dataConverter: dataConverter(storeSettings(h.env)),
      interceptors: { workflow: [counter] },
    });
    // Six paced steps (half a second each: pacing, not synchronisation; a slower machine only makes
    // the run longer), in which a 100 ms poll would have asked ~30 times.
    h.model.setScript((req: RecordedRequest): ScriptedReply => {
      const done = req.body.messages.filter((m) => m.role === 'tool').length;
      return done < 6
        ? { delayMs: 500, toolCalls: [{ name: 'think', arguments: { thought: `step ${done}` } }] }
        : { delayMs: 500, content: 'done' };
    });
    const conversation = await Conversation.create(client, {
      agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] }),
      workspace: await h.workspace(),
      firstMessage: 'think six times',
    });
    conversationId = conversation.id;
    silentWaits = 0;
    const final = await conversation.run().then(() => conversation.state());
    assert.equal(final.status, 'finished');
    // The state before the wait, once a notice says the run stopped, and the one asked here after it;
    // beyond those, one for each wait that heard no notice (a busy machine's slow step). A poll
    // would ask whether or not anything came.
    const run = { queries: calls.query, silentWaits };
    assert.ok(run.queries <= 3 + run.silentWaits, `state queries: ${run.queries}, waits with no notice: ${run.silentWaits}`);
    // The update that runs it, and none to wait: nothing of the waiting is in the conversation's history.
    assert.equal(calls.update, 1, `updates: ${calls.update} for ${final.events} events`);

    // follow(): every event, in order, then it stops with the run.
    const seen: number[] = [];
    for await (const e of conversation.follow({ until: (s) => s.status !== 'running' })) seen.push(e.index);
    assert.deepEqual(
      seen,
      Array.from({ length: final.events }, (_, i) => i),
    );
    console.log(
      `# a run of six paced steps: ${run.queries} queries (${run.silentWaits} waits with no notice), ${calls.update} updates, ${calls.streamPolls} stream polls`,
    );
  });
});

// Hooks and skills in a real conversation: a PreToolUse hook blocks `rm -rf` (the reason reaches
// the model) while a later command runs; a PostToolUse hook sees every tool; a hanging hook times
// out into an error event and the conversation goes on; UserPromptSubmit refuses a message; a Stop
// hook makes the agent go on once; a skill is listed in the prompt, its body never.
describe('hooks and skills', () => {
  const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] });
  const toolResults = (r: RecordedRequest) => r.body.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));

  test('PreToolUse blocks rm -rf with its reason; a later command runs; PostToolUse sees every tool', async () => {
    const workspace = await h.workspace();
    await writeFile(path.join(workspace, 'keep.txt'), 'precious\n');
    const policy = `node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const e=JSON.parse(s);if(/rm -rf/.test(e.tool_input.command)){console.error("never rm -rf in this repository");process.exit(2)}})'`;
    const audit = `node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const e=JSON.parse(s);require("fs").appendFileSync("audit.log",e.tool_name+" "+e.tool_response.isError+"\\n")})'`;
    const hooks: HooksConfig = {
      hooks: {
        PreToolUse: [{ matcher: 'terminal', hooks: [{ type: 'command', command: policy, timeout: 30 }] }],
        PostToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: audit }] }],
      },
    };
    h.model.setScript((r): ScriptedReply => {
      const done = toolResults(r).length;
      if (done === 0) return { toolCalls: [{ name: 'terminal', arguments: { command: 'rm -rf keep.txt' } }] };
      if (done === 1) return { toolCalls: [{ name: 'terminal', arguments: { command: 'echo later > later.txt' } }] };
      return { content: 'done' };
    });
    const conversation = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'clean up', run: true, hooks });
    const final = await conversation.waitUntil((s) => s.status !== 'running', 200, 60_000);
    assert.equal(final.status, 'finished', final.lastError ?? '');
    assert.equal(await readFile(path.join(workspace, 'keep.txt'), 'utf8'), 'precious\n', 'rm -rf did not run');
    assert.equal(await readFile(path.join(workspace, 'later.txt'), 'utf8'), 'later\n', 'the later command ran');
    const last = h.model.requests[h.model.requests.length - 1];
    assert.ok(last && toolResults(last)[0]?.includes('never rm -rf in this repository'), 'the reason reached the model');
    // PostToolUse saw the one call that ran (the blocked one never ran).
    assert.equal((await readFile(path.join(workspace, 'audit.log'), 'utf8')).trim(), 'terminal false');
  });

  test('a hanging hook times out into an error event and the conversation goes on; onFailure block blocks', async () => {
    const workspace = await h.workspace();
    h.model.setScript((r): ScriptedReply =>
      toolResults(r).length < 2
        ? { toolCalls: [{ name: 'terminal', arguments: { command: `echo step${toolResults(r).length}` } }] }
        : { content: 'done' },
    );
    const hooks: HooksConfig = {
      hooks: {
        PreToolUse: [{ matcher: '', hooks: [{ type: 'command', command: 'if [ -f first ]; then sleep 30; fi; touch first', timeout: 1 }] }],
      },
    };
    await writeFile(path.join(workspace, 'first'), '');
    const conversation = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'go', run: true, hooks });
    const final = await conversation.waitUntil((s) => s.status !== 'running', 200, 60_000);
    assert.equal(final.status, 'finished');
    const errors = (await conversation.events()).filter((e) => e.kind === 'error').map((e) => (e.kind === 'error' ? e.message : ''));
    assert.ok(
      errors.some((m) => /hook: .*did not finish within its timeout/.test(m)),
      errors.join('\n'),
    );

    const blocking: HooksConfig = {
      hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'sleep 30', timeout: 1, onFailure: 'block' }] }] },
    };
    h.model.setScript((r): ScriptedReply =>
      toolResults(r).length < 1 ? { toolCalls: [{ name: 'terminal', arguments: { command: 'touch ran.txt' } }] } : { content: 'done' },
    );
    const strict = await Conversation.create(h.client, {
      agent: agent(),
      workspace: await h.workspace(),
      firstMessage: 'go',
      run: true,
      hooks: blocking,
    });
    await strict.waitUntil((s) => s.status !== 'running', 200, 60_000);
    const observation = (await strict.events()).find((e) => e.kind === 'observation');
    assert.ok(observation?.kind === 'observation' && /Not run: a PreToolUse hook blocked this call/.test(observation.content));
  });

  test('UserPromptSubmit refuses a message (the model never sees it); a Stop hook makes the agent go on once', async () => {
    const workspace = await h.workspace();
    const hooks: HooksConfig = {
      hooks: {
        UserPromptSubmit: [
          {
            hooks: [
              {
                type: 'command',
                command: `node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{if(/password/.test(JSON.parse(s).prompt)){console.error("no passwords in prompts");process.exit(2)}})'`,
              },
            ],
          },
        ],
        Stop: [
          {
            hooks: [
              {
                type: 'command',
                command: `node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{if(!JSON.parse(s).stop_hook_active){console.log(JSON.stringify({decision:"block",reason:"run the tests first"}))}})'`,
              },
            ],
          },
        ],
      },
    };
    h.model.setScript(() => ({ content: 'finished' }));
    const conversation = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'hello', run: true, hooks });
    let final = await conversation.waitUntil((s) => s.status !== 'running', 200, 60_000);
    assert.equal(final.status, 'finished');
    const requests = h.model.requests.slice(-2);
    assert.ok(
      requests[1]?.body.messages.some((m) => String(m.content).includes('run the tests first')),
      'the Stop reason reached the model, which went on',
    );

    const before = h.model.requests.length;
    await conversation.sendMessage('my password is hunter2');
    final = await conversation.run().then(() => conversation.state());
    const seen = h.model.requests.slice(before).flatMap((r) => r.body.messages.map((m) => String(m.content)));
    assert.ok(!seen.some((t) => t.includes('hunter2')), 'the refused message never reached the model');
    const events = await conversation.events();
    assert.ok(events.some((e) => e.kind === 'refused' && /no passwords in prompts/.test(e.reason)));
  });

  test('a PreToolUse hook that asks: the call waits for an approval, then runs', async () => {
    const workspace = await h.workspace();
    const asker = `node -e 'process.stdin.resume();process.stdin.on("end",()=>console.log(JSON.stringify({hookSpecificOutput:{hookEventName:"PreToolUse",permissionDecision:"ask",permissionDecisionReason:"a person checks this"}})))'`;
    const hooks: HooksConfig = { hooks: { PreToolUse: [{ matcher: 'terminal', hooks: [{ type: 'command', command: asker }] }] } };
    h.model.setScript((r): ScriptedReply =>
      toolResults(r).length < 1
        ? { toolCalls: [{ name: 'terminal', arguments: { command: 'echo asked > asked.txt' } }] }
        : { content: 'done' },
    );
    const conversation = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'go', run: true, hooks });
    const waiting = await conversation.waitUntil((s) => s.status !== 'running', 200, 60_000);
    assert.equal(waiting.status, 'waiting_for_confirmation', waiting.lastError ?? '');
    await conversation.approve();
    const final = await conversation.waitUntil((s) => s.status !== 'running' && s.status !== 'waiting_for_confirmation', 200, 60_000);
    assert.equal(final.status, 'finished', final.lastError ?? '');
    assert.equal(await readFile(path.join(workspace, 'asked.txt'), 'utf8'), 'asked\n');
  });

  test('a skill is listed in the system prompt (name, description, path), its body never', async () => {
    const workspace = await h.workspace();
    await mkdir(path.join(workspace, '.agents', 'skills', 'release-notes'), { recursive: true });
    await writeFile(
      path.join(workspace, '.agents', 'skills', 'release-notes', 'SKILL.md'),
      '---\nname: release-notes\ndescription: Write release notes from the git log\n---\nSECRET-BODY-INSTRUCTIONS: use the changelog template.\n',
    );
    await mkdir(path.join(workspace, '.agents', 'skills', 'broken'), { recursive: true });
    await writeFile(path.join(workspace, '.agents', 'skills', 'broken', 'SKILL.md'), 'no front matter here\n');
    h.model.setScript(() => ({ content: 'ok' }));
    const before = h.model.requests.length;
    const conversation = await Conversation.create(h.client, { agent: agent(), workspace, firstMessage: 'hi', run: true });
    await conversation.waitUntil((s) => s.status !== 'running', 200, 60_000);
    const system = String(h.model.requests[before]?.body.messages[0]?.content);
    assert.match(system, /release-notes: Write release notes from the git log \(\.agents\/skills\/release-notes\/SKILL\.md\)/);
    assert.ok(!system.includes('SECRET-BODY'), 'the body is not inlined');
    const skills = (await conversation.events()).find((e) => e.kind === 'skills');
    assert.ok(skills?.kind === 'skills');
    assert.deepEqual(
      skills.skills.map((s) => s.name),
      ['release-notes'],
    );
    assert.ok(
      skills.warnings.some((w) => /broken/.test(w)),
      skills.warnings.join('\n'),
    );
  });
});

// Skills through a real worker: prepareTools, on the workspace's host, reports the workspace's and the
// host's skills (names, descriptions, paths; never a body) and a warning for each skipped file.
describe("the host's skills", () => {
  // The host's skills folder is the worker's: emptied after, so no later conversation lists them.
  before(() => h.model.setScript(() => ({ content: 'ok' })));
  after(() => rm(path.join(h.home, 'skills'), { recursive: true, force: true }));

  async function skill(root: string, name: string, text: string) {
    await mkdir(path.join(root, name), { recursive: true });
    await writeFile(path.join(root, name, 'SKILL.md'), text);
  }

  test('prepareTools lists the skills of the workspace and the host, with a warning for a malformed one', async () => {
    const workspace = await h.workspace();
    await skill(
      path.join(workspace, '.agents', 'skills'),
      'pdf-forms',
      '---\nname: pdf-forms\ndescription: Fill in PDF forms.\n---\nBODY-NOT-SHOWN\n',
    );
    await skill(path.join(workspace, '.agents', 'skills'), 'broken', 'no front matter\n');
    await skill(path.join(h.home, 'skills'), 'code-review', '---\nname: code-review\ndescription: Review a diff.\n---\nBODY-NOT-SHOWN\n');
    const agent = new Agent({ llm: new LLM({ usageId: 'agent', model: 'openai/gpt-4o-mini' }), tools: [] });
    const conversation = await Conversation.create(h.client, { agent, workspace, firstMessage: 'hi' });
    assert.equal((await conversation.run()).status, 'finished');
    const history = await h.client.workflow.getHandle(conversation.id).fetchHistory();
    const completed = (history.events ?? []).map((e) => e.activityTaskCompletedEventAttributes).filter(Boolean);
    const result = completed
      .map((a) => JSON.parse(Buffer.from(a!.result!.payloads![0]!.data!).toString('utf8')))
      .find((r) => r && Array.isArray(r.tools));
    assert.ok(result, 'the prepareTools result');
    assert.deepEqual(result.skills, [
      { name: 'code-review', description: 'Review a diff.', path: path.join(h.home, 'skills', 'code-review', 'SKILL.md'), scope: 'user' },
      { name: 'pdf-forms', description: 'Fill in PDF forms.', path: '.agents/skills/pdf-forms/SKILL.md', scope: 'workspace' },
    ]);
    assert.deepEqual(result.warnings, [
      'The skill .agents/skills/broken/SKILL.md is skipped: it does not start with a front matter (a line "---", then name: and description:, then "---").',
    ]);
    assert.ok(!historyText(history).includes('BODY-NOT-SHOWN'));
  });
});

// Conversations of any length: continue-as-new keeps each run's history small even with large
// observations (the real worker stores the carried state outside history). Signals across
// continue-as-new and what a condensed conversation carries are workflow rules, tested in process
// in test/workflow/long-conversation.test.ts.
describe('long conversations', () => {
  const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] });

  async function runs(id: string): Promise<{ runId: string; historyLength: number; historySize: number }[]> {
    const out = [];
    for await (const wf of h.client.workflow.list({ query: `WorkflowId = '${id}'` })) {
      const d = await h.client.workflow.getHandle(id, wf.runId).describe();
      out.push({ runId: wf.runId, historyLength: d.historyLength, historySize: d.historySize ?? 0 });
    }
    return out;
  }

  // Three runs of 25 steps (continue-as-new every 25 instead of the default 100: the same code path,
  // a quarter of the steps). Each run's history grows with its steps, not with the conversation: a
  // run that carried every earlier observation again (quadratic) would pass 6 MB in 25 steps, against the 4 MB bound.
  test('75 steps with 20 KB observations over three runs: every event readable, history per run small and flat', async () => {
    const STEPS = 75;
    const EVERY = 25;
    const script: Script = (req) => {
      const done = req.body.messages.filter((m) => m.role === 'tool').length;
      if (done >= STEPS) return { content: 'Finished all steps.' };
      return {
        toolCalls: [{ name: 'terminal', arguments: { command: `printf 'step-${done}:'; head -c 20000 /dev/zero | tr '\\0' 'x'` } }],
      };
    };
    h.model.setScript(script);
    const started = Date.now();
    // The script counts the results in its prompt, so the condenser (which would shorten it) is off.
    const conversation = await Conversation.create(h.client, {
      agent: agent(),
      workspace: await h.workspace(),
      firstMessage: 'Go',
      run: true,
      condenser: false,
      continueAsNewEverySteps: EVERY,
    });
    const final = await conversation.waitUntil((s) => s.status !== 'running', 250, 900_000);
    const seconds = (Date.now() - started) / 1000;
    assert.equal(final.status, 'finished', final.lastError ?? '');
    const events = await conversation.events();
    const observations = events.filter((e): e is ObservationEvent => e.kind === 'observation');
    assert.equal(observations.length, STEPS);
    observations.forEach((o, i) => {
      assert.ok(o.content.startsWith(`step-${i}:`), `observation ${i} intact`);
      assert.ok(o.content.length > 20_000);
    });
    const chain = await runs(conversation.id);
    assert.ok(chain.length >= 3, `continued as new ${chain.length - 1} times`);
    for (const run of chain) {
      assert.ok(run.historyLength < 50 * EVERY, `run ${run.runId} has ${run.historyLength} events`);
      assert.ok(run.historySize < 4 * 1024 * 1024, `run ${run.runId} history is ${run.historySize} bytes`);
    }
    console.log(
      `# ${STEPS} steps in ${seconds.toFixed(1)} s; runs: ${chain.map((r) => `${r.historyLength} events/${(r.historySize / 1024).toFixed(0)} KiB`).join(', ')}`,
    );
  });
});

// The `wait` tool: a durable timer. The worker may die while the conversation waits. (A message, a
// resume or a pause ending a wait early is test/workflow/conversation.test.ts's.) Last in the file:
// its test kills the file's worker and starts another of the same settings.
describe('the wait tool', () => {
  /** Waits as the first message says (`wait <seconds>`), then answers with what it observed. */
  function waitScript(request: RecordedRequest): ScriptedReply {
    const messages = request.body.messages;
    const last = messages[messages.length - 1];
    const tool = [...messages].reverse().find((m) => m.role === 'tool');
    const asked = /^wait (\d+)$/.exec(String(last?.content ?? ''));
    if (last?.role !== 'user' || !asked) return { content: `observed: ${String(tool?.content)}` };
    const seconds = Number(asked[1]);
    return { toolCalls: [{ name: 'wait', arguments: { seconds, reason: 'waiting for CI' } }] };
  }

  before(() => h.model.setScript(waitScript));

  const agent = () => new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal', 'wait'] });

  test('a wait of a few seconds survives its worker being killed and replaced', async () => {
    const conversation = await Conversation.create(h.client, {
      agent: agent(),
      workspace: await h.workspace(),
      firstMessage: 'wait 4',
      run: true,
    });
    const waiting = await waitFor('the wait to begin', async () => (await conversation.state()).waitingUntil);
    assert.equal(waiting.reason, 'waiting for CI');
    await worker.kill('SIGKILL');
    worker = await h.startWorker();
    const final = await conversation.waitUntil((s) => s.status !== 'running', 200, 60_000);
    assert.equal(final.status, 'finished');
    assert.match(final.finalMessage ?? '', /observed: Waited until .*the time has come/);
    assert.equal((await conversation.state()).waitingUntil, null);
  });
});
