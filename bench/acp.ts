// ACP bench (figures, not asserts): `npm run bench:acp`. `faheem acp` as a child process driven by
// the ACP SDK's client, against a dev server and a real worker process, with the scripted model
// streaming a reply word by word (BENCH_ACP_CHUNK_MS apart, default 20; its first word at once).
// Per prompt turn: prompt sent → first `agent_message_chunk`, and → the prompt's answer (end_turn);
// BENCH_ACP_TURNS (default 20) turns in one session, then the same in a session loaded by a second
// process (the replay's cost: session/load sent → answered, with every update before it).
import { methods } from '@agentclientprotocol/sdk';
import { startAcp } from '../test/support/acp.js';
import { startHarness } from '../test/support/harness.js';
import { pct } from './step.js';

const turns = Number(process.env.BENCH_ACP_TURNS) || 20;
const chunkMs = Number(process.env.BENCH_ACP_CHUNK_MS ?? 20);
const words = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');

const h = await startHarness({
  name: 'bench-acp',
  script: () => ({ content: words, wordByWord: true, chunkDelayMs: chunkMs }),
});
await h.startWorker();
const fmt = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(0)} ms, p99 ${pct(xs, 99).toFixed(0)} ms (n=${xs.length})`;

try {
  const acp = await startAcp(h.env);
  await acp.connection.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  const cwd = await h.workspace();
  const { sessionId } = await acp.connection.agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
  let firstChunkAt: number | undefined;
  acp.onUpdate((id, u) => {
    if (id === sessionId && u.sessionUpdate === 'agent_message_chunk') firstChunkAt ??= Date.now();
  });
  const first: number[] = [];
  const whole: number[] = [];
  for (let i = 0; i < turns; i++) {
    firstChunkAt = undefined;
    const t0 = Date.now();
    const answer = await acp.connection.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: 'text', text: `turn ${i}` }],
    });
    whole.push(Date.now() - t0);
    if (firstChunkAt !== undefined && answer.stopReason === 'end_turn') first.push(firstChunkAt - t0);
  }
  console.log(`first turn of the session (the host prepares its tools, checkpoint 0): first chunk ${first[0]} ms, answered ${whole[0]} ms`);
  console.log(`prompt sent → first agent_message_chunk: ${fmt(first)}; turns after the first: ${fmt(first.slice(1))}`);
  console.log(`prompt sent → answered (end_turn; ${words.split(' ').length} words, ${chunkMs} ms apart): ${fmt(whole)}`);
  if (acp.problems.length) console.log(`schema problems: ${acp.problems.length} (first: ${acp.problems[0]})`);
  await acp.kill();

  const loads: number[] = [];
  for (let i = 0; i < 5; i++) {
    const again = await startAcp(h.env);
    await again.connection.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const t0 = Date.now();
    await again.connection.agent.request(methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
    loads.push(Date.now() - t0);
    if (i === 0) console.log(`session/load of ${turns} turns replays ${again.updates(sessionId).length} updates`);
    await again.kill();
  }
  console.log(`session/load sent → answered (the whole replay): ${fmt(loads)}`);
} finally {
  await h.close();
}
process.exit(0);
