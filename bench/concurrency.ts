// Many conversations at once (figures, not asserts): `npm run bench:concurrency [N…]`. N conversations
// of K steps each (a terminal command a step) with a 100 ms model, on one worker, against Temporal's
// floor workflow at the same concurrency on the same server. The ratio is the figure (issue 9).
import { Conversation } from '../src/client.js';
import { startHarness } from '../test/support/harness.js';
import { floorThroughput } from './floor/floor.js';
import { benchAgent, stepScript } from './step.js';

const STEPS = 10;
const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
const h = await startHarness({ name: 'bench-concurrency', script: () => ({ content: 'ok' }), record: false });
try {
  await h.startWorker();
  const slow = stepScript(STEPS);
  h.model.setScript((req) => ({ ...slow(req), delayMs: 100 }));
  for (const n of sizes.length ? sizes : [10, 50]) {
    const t0 = performance.now();
    const conversations = await Promise.all(
      Array.from({ length: n }, async () =>
        Conversation.create(h.client, { agent: benchAgent(), workspace: await h.workspace(), firstMessage: 'go', run: true }),
      ),
    );
    const finals = await Promise.all(conversations.map((c) => c.waitUntilStopped({ timeoutMs: 600_000 })));
    const seconds = (performance.now() - t0) / 1000;
    const bad = finals.filter((s) => s.status !== 'finished').length;
    const ours = (n * STEPS) / seconds;
    const floor = await floorThroughput(h.server.address, n, STEPS);
    console.log(
      `${n} conversations × ${STEPS} steps, 100 ms model: ${ours.toFixed(1)} steps/s (${seconds.toFixed(1)} s${bad ? `, ${bad} not finished` : ''}); ` +
        `Temporal's floor at ${n} at once: ${floor.toFixed(1)} steps/s; ratio ${((ours / floor) * 100).toFixed(0)}%`,
    );
  }
} finally {
  await h.close();
}
