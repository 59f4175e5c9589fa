// The examples users copy from: each runs as a user would run it (tsx, against a running server),
// with the offline scripted model, and does what it says.
import { execa } from 'execa';
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, startHarness, type Harness } from '../support/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness({ name: 'examples', script: () => ({ content: 'unused' }), record: false });
});
after(async () => h?.close());

async function runExample(file: string): Promise<string> {
  // The example's own environment: a server and a home, no model (so it uses its offline stand-in).
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    TEMPORAL_ADDRESS: h.env.TEMPORAL_ADDRESS!,
    TEMPORAL_NAMESPACE: h.env.TEMPORAL_NAMESPACE!,
    FAHEEM_HOME: h.env.FAHEEM_HOME!,
    NO_COLOR: '1',
  };
  const r = await execa('node', ['--import', 'tsx', path.join('examples', file)], {
    cwd: ROOT,
    env,
    extendEnv: false,
    reject: false,
    timeout: 120_000,
    all: true,
  });
  assert.equal(r.exitCode, 0, r.all);
  return r.stdout;
}

test('examples/custom-tool.ts: the worker runs a defineTool tool the model called', async () => {
  const out = await runExample('custom-tool.ts');
  assert.match(out, /action: add_numbers \{"a":2,"b":3\}/);
  assert.match(out, /observation: 5$/m);
  assert.match(out, /status: finished/);
});

test('examples/follow-live.ts: the reply and the command output as they stream, then the events', async () => {
  const out = await runExample('follow-live.ts');
  // The command's output, live (`| `) or, when the command ended before its lines reached the
  // follower on a busy machine, as recorded (`= `); live output is held to its order in live.test.ts.
  assert.match(out, /[|=] count 1[\s\S]*[|=] count 3/);
  // A new step's lines wait for the events before them only so long (src/live/follow.ts): on a busy
  // machine the step before's events may land inside the reply. Without them, the reply is whole
  // and comes before the event that records it.
  const reply = out.replace(/event \d+: (action \w+|its output, recorded)\n/g, '').replace(/^ {2}= .*\n/gm, '');
  assert.match(reply, /The command counted to three, a line every fifth of a second\.\nevent \d+: the reply, recorded/, out);
  assert.match(out, /live lines: .*model_delta \d+/);
  assert.match(out, /status: finished/);
});

test("examples/mcp.ts: an MCP server's tool through the conversation", async () => {
  const out = await runExample('mcp.ts');
  assert.match(out, /action: mcp__everything__get-sum/);
  assert.match(out, /observation: The sum of 20 and 22 is 42\./);
  assert.match(out, /status: finished/);
});
