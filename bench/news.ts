// How soon a follower hears news (figures, not asserts): `node --import tsx bench/news.ts`. On the
// embedded dev server (or the run's shared one) with the scripted model and a real worker process:
//  - pause seen: a follower (`follow()`, no live lines) is caught up on a running conversation whose
//    model call is held at a gate; the pause signal is sent, and the time until the follower yields
//    the pause is measured (same clock), p50/p99 over BENCH_NEWS_TRIALS (20);
//  - run() answered: `run()` of a one-step conversation, the time from the model's reply to run()
//    resolving;
//  - the conversation's history events for one step run with `run()` and two followers.
// With the client of an earlier commit checked out beside it, the same script measures the
// waitForChange updates that came before (docs/live.md, "How followers wait").
import { Agent, Conversation, LLM } from '../src/client/client.js';
import { startHarness } from '../test/support/harness.js';
import { pct } from './step.js';

const TRIALS = Number(process.env.BENCH_NEWS_TRIALS ?? 20);
const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : 'n/a');

const h = await startHarness({ name: 'bench-news', script: () => ({ content: 'ok' }), record: false });
try {
  await h.startWorker();
  const agent = new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] });

  // Pause seen by a follower.
  const pauseMs: number[] = [];
  for (let i = 0; i < TRIALS; i++) {
    h.model.setScript(() => ({ content: 'held', gate: 'hold' }));
    h.model.hold('hold');
    const c = await Conversation.create(h.client, { agent, workspace: await h.workspace(), firstMessage: `trial ${i}`, run: true });
    await h.model.reached('hold');
    let sentAt = 0;
    let caughtUp!: () => void;
    const ready = new Promise<void>((r) => (caughtUp = r));
    const seen = (async () => {
      for await (const e of c.follow({ until: (s) => s.status !== 'running' })) {
        if (e.kind === 'status' && e.status === 'running') caughtUp();
        if (e.kind === 'pause' || (e.kind === 'status' && e.status === 'paused')) return performance.now() - sentAt;
      }
      return NaN;
    })();
    await ready;
    // The follower's wait is under way (its stream started and listed by the worker): let it settle.
    await new Promise((r) => setTimeout(r, 500));
    sentAt = performance.now();
    await c.pause();
    pauseMs.push(await seen);
    h.model.release('hold');
    await c.close();
  }
  console.log(`pause seen by a follower (${TRIALS}): p50 ${fmt(pct(pauseMs, 50))} ms, p99 ${fmt(pct(pauseMs, 99))} ms`);

  // run() answered after the reply.
  const runMs: number[] = [];
  for (let i = 0; i < TRIALS; i++) {
    let repliedAt = 0;
    h.model.setScript(() => ({ content: 'done', wordByWord: true, onChunk: (_text, at) => (repliedAt = at) }));
    const c = await Conversation.create(h.client, { agent, workspace: await h.workspace(), firstMessage: `run ${i}` });
    await c.run();
    runMs.push(Date.now() - repliedAt);
  }
  console.log(`run() answered after the model's reply (${TRIALS}): p50 ${fmt(pct(runMs, 50))} ms, p99 ${fmt(pct(runMs, 99))} ms`);

  // History events of a one-step run with two followers.
  h.model.setScript(() => ({ content: 'done' }));
  const c = await Conversation.create(h.client, { agent, workspace: await h.workspace(), firstMessage: 'watched' });
  const until = (s: { status: string }) => s.status === 'finished';
  const followers = [
    (async () => {
      for await (const x of c.follow({ live: true, until })) void x;
    })(),
    (async () => {
      for await (const x of c.follow({ until })) void x;
    })(),
  ];
  await c.run();
  await Promise.all(followers);
  const events = (await h.client.workflow.getHandle(c.id).fetchHistory()).events?.length ?? 0;
  console.log(`history events of a one-step run() with two followers: ${events}`);
} finally {
  await h.close();
}
