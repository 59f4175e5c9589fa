// From a host's loss to the conversation's next step on another host (figures, not asserts):
// `npm run bench:pool-loss`. Two pool workers as two hosts on this machine, a folder as the object
// store, default timeouts (a tool call's heartbeat timeout is 5 s). Each round: a pooled
// conversation runs a command that never ends on its host; the host is SIGKILLed and its folders
// deleted; measured to the host_changed event and to the next step's observation (the model is
// scripted, no delay). BENCH_ROUNDS (5) sets the rounds.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, Conversation, LLM } from '../src/client/client.js';
import type { RecordedRequest, ScriptedReply } from '../src/testing/scripted-model.js';
import { startHarness, waitFor, type WorkerProcess } from '../test/support/harness.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const root = await mkdtemp(path.join(os.tmpdir(), 'faheem-bench-loss-'));
const h = await startHarness({
  name: 'bench-pool-loss',
  script: (req: RecordedRequest): ScriptedReply => {
    const results = req.body.messages.filter((m) => m.role === 'tool').length;
    if (results === 0) return { toolCalls: [{ name: 'terminal', arguments: { command: 'touch started; sleep 600' } }] };
    if (results === 1) return { toolCalls: [{ name: 'terminal', arguments: { command: 'echo next' } }] };
    return { content: 'Done.' };
  },
  env: { FAHEEM_OBJECT_STORE: `file://${path.join(root, 'store')}`, FAHEEM_TERMINAL_SOFT_TIMEOUT_S: '600' },
});
const hosts = new Map<string, { dir: string; worker: WorkerProcess }>();
let next = 0;
async function startHost(): Promise<void> {
  const id = `host-${next++}`;
  const dir = path.join(root, id);
  await mkdir(path.join(dir, 'home'), { recursive: true });
  const worker = await h.startWorker(
    { FAHEEM_HOST_ID: id, FAHEEM_WORKSPACES_DIR: path.join(dir, 'ws'), FAHEEM_HOME: path.join(dir, 'home') },
    ['--pool', 'b'],
  );
  hosts.set(id, { dir, worker });
}
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
try {
  await startHost();
  await startHost();
  const toMove: number[] = [];
  const toStep: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const conversation = await Conversation.create(h.client, {
      agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: ['terminal'] }),
      pool: 'b',
      firstMessage: 'go',
      run: true,
    });
    const holder = await waitFor('the command to start', async () => {
      const s = await conversation.state();
      const host = s.host ? hosts.get(s.host) : undefined;
      return host && existsSync(path.join(s.workspace, 'started')) ? s.host! : undefined;
    });
    const { worker, dir } = hosts.get(holder)!;
    const lost = Date.now();
    await worker.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    hosts.delete(holder);
    await startHost(); // the pool stays at two hosts for the next round
    await conversation.waitUntil((s) => s.status !== 'running', 200, 120_000);
    const events = await conversation.events();
    const moved = events.find((e) => e.kind === 'host_changed' && e.from !== null);
    const stepped = events.filter((e) => e.kind === 'observation')[1];
    if (!moved || !stepped) throw new Error(`round ${round}: no move or no next step`);
    toMove.push(Date.parse(moved.timestamp) - lost);
    toStep.push(Date.parse(stepped.timestamp) - lost);
  }
  console.log(`${ROUNDS} rounds, two hosts on one machine (${os.cpus().length} cores), default timeouts:`);
  console.log('| from the loss to | p50 ms | max ms |');
  console.log('|---|---|---|');
  console.log(`| host_changed (restored on the other host) | ${pct(toMove, 50)} | ${Math.max(...toMove)} |`);
  console.log(`| the next step's result | ${pct(toStep, 50)} | ${Math.max(...toStep)} |`);
} finally {
  await h.close();
  await rm(root, { recursive: true, force: true });
}
