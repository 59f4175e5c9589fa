// How fast the answers come that the tests only check the content of (figures, not asserts; the
// tests in test/e2e/clear-answers.test.ts and test/unit/models/client.test.ts hold the behaviour):
//   - `faheem status` with no worker: a conversation never picked up, and one that recorded a status
//     on a queue nobody polls (each a fresh CLI process: node's start included);
//   - every command with no server at all (connection refused);
//   - a cancelled streaming model call (in-process): abort() → the call rejects.
// `npx tsx bench/answers.ts [runs]` (default 5; build first: `npm run build`).
import { execa } from 'execa';
import path from 'node:path';
import { ModelClients } from '../src/models/client.js';
import { startScriptedAnthropic } from '../src/testing/scripted-anthropic.js';
import { ConversationStatusKey } from '../src/conversation/workflow/messages.js';
import { freePort, ROOT, startHarness } from '../test/support/harness.js';
import { pct } from './step.js';
import { modelSettings } from '../src/settings/models.js';

const runs = Number(process.argv[2] ?? 5);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`runs must be a positive integer, got ${process.argv[2]}`);

const h = await startHarness({ name: 'bench-answers', script: () => ({ content: 'done' }), record: false });
const figures: string[] = [];
const summary = (what: string, ms: number[]) => {
  const sorted = [...ms].sort((a, b) => a - b);
  const line = `${what}: p50 ${pct(sorted, 50).toFixed(0)} ms, max ${sorted[sorted.length - 1]!.toFixed(0)} ms (${ms.length} runs)`;
  figures.push(line);
  console.log(line);
};

async function timed(args: string[], extra: Record<string, string> = {}): Promise<number> {
  const started = performance.now();
  const r = await execa('node', [path.join(ROOT, 'bin/faheem.js'), ...args], { cwd: ROOT, env: { ...h.env, ...extra }, reject: false });
  const ms = performance.now() - started;
  if (!/last known status|cannot reach Temporal/.test(r.stdout + r.stderr))
    throw new Error(`unexpected answer to ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return ms;
}

try {
  // A node process that only starts: the floor under every CLI figure.
  const node: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await execa('node', ['-e', '0']);
    node.push(performance.now() - t);
  }
  summary('node -e 0 (the floor under a CLI command)', node);

  const workspace = await h.workspace();
  await execa('node', [path.join(ROOT, 'bin/faheem.js'), 'start', 'Say done', '--workspace', workspace, '--id', 'bench-first'], {
    cwd: ROOT,
    env: h.env,
  });
  const never: number[] = [];
  for (let i = 0; i < runs; i++) never.push(await timed(['status', 'bench-first']));
  summary('faheem status, no worker, never picked up', never);

  await h.client.workflow.start('conversation', {
    workflowId: 'bench-paused',
    taskQueue: 'bench-nobody',
    args: [
      {
        options: {
          workspace,
          agent: { llm: { usageId: 'agent' }, tools: ['terminal'] },
          toolTaskQueue: 'bench-nobody-tools',
          maxIterations: 5,
          confirmationPolicy: 'never',
          idleTimeoutMs: 600_000,
        },
      },
    ],
    typedSearchAttributes: [{ key: ConversationStatusKey, value: 'paused' }],
  });
  const recorded: number[] = [];
  for (let i = 0; i < runs; i++) recorded.push(await timed(['status', 'bench-paused']));
  summary('faheem status, no worker, a recorded status', recorded);

  const address = `127.0.0.1:${await freePort()}`;
  for (const args of [['status', 'x'], ['list'], ['start', 'hi', '--workspace', ROOT]]) {
    const ms: number[] = [];
    for (let i = 0; i < runs; i++) ms.push(await timed(args, { TEMPORAL_ADDRESS: address }));
    summary(`faheem ${args[0]} with no server`, ms);
  }

  const anthropic = await startScriptedAnthropic(() => ({ gate: 'never', content: 'late' }));
  try {
    const models = new ModelClients(modelSettings({ ANTHROPIC_API_KEY: 'sk-ant-bench', ANTHROPIC_BASE_URL: anthropic.baseUrl }), () => {});
    const aborts: number[] = [];
    for (let i = 0; i < runs * 4; i++) {
      const abort = new AbortController();
      const call = models.complete(
        {
          llm: { usageId: 'u', model: 'anthropic/claude-sonnet-4-6' },
          messages: [{ role: 'user', content: 'hi' }],
          tools: [],
          conversationId: 'c',
        },
        abort.signal,
      );
      await anthropic.reached('never');
      const t = performance.now();
      abort.abort();
      await call.catch(() => undefined);
      aborts.push(performance.now() - t);
      while (anthropic.held('never').length > 0) await new Promise((r) => setTimeout(r, 1));
    }
    summary('a streaming model call aborted: abort() → the call rejects', aborts);
  } finally {
    await anthropic.close();
  }
} finally {
  await h.close();
}
console.log(`\n${figures.map((f) => `- ${f}`).join('\n')}`);
