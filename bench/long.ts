// One long conversation with bulky observations (figures, not asserts): `npm run bench:long [steps]`.
// Each step runs a command printing ~20 KB; the condenser is on (as by default), the scripted model
// reports prompt tokens as characters / 4 like a real one, and the conversation continues as new every
// 100 steps. Prints ms per step over the first and the last 100 steps, the worker's memory at the end,
// and the bytes each continue-as-new carried: all must stay flat however long the conversation runs.
import { readFileSync } from 'node:fs';
import { Conversation } from '../src/client/client.js';
import type { Harness } from '../test/support/harness.js';
import { startHarness } from '../test/support/harness.js';
import { benchAgent } from './step.js';

export interface LongFigures {
  steps: number;
  firstMsPerStep: number;
  lastMsPerStep: number;
  workerRssMb: number;
  workerPeakRssMb: number;
  runs: number;
  carriedBytes: number[];
  condensations: number;
  seconds: number;
}

function memoryMb(pid: number | undefined, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${field}:`));
    return Number(line?.match(/(\d+)/)?.[1] ?? NaN) / 1024;
  } catch {
    return NaN;
  }
}

export async function longConversation(h: Harness, workerPid: number | undefined, steps = 1000, window = 100): Promise<LongFigures> {
  const at: number[] = []; // when each step's model call arrived
  let condensations = 0;
  h.model.setScript((req) => {
    h.model.requests.length = 0; // the recorded bodies would hold every prompt of the run
    const chars = JSON.stringify(req.body.messages).length;
    const usage = { prompt_tokens: Math.round(chars / 4), completion_tokens: 30 };
    if (!req.body.tools) {
      condensations++;
      return { content: 'Summary: the agent printed bulky outputs in a loop; nothing else to keep.', usage };
    }
    at.push(performance.now());
    if (at.length > steps) return { content: 'done', usage };
    return {
      usage,
      toolCalls: [{ name: 'terminal', arguments: { command: `echo step ${at.length}; head -c 20000 /dev/zero | tr '\\0' y` } }],
    };
  });
  const t0 = performance.now();
  const conversation = await Conversation.create(h.client, {
    agent: benchAgent(),
    workspace: await h.workspace(),
    firstMessage: 'go',
    run: true,
    maxIterations: steps + 10,
  });
  const final = await conversation.waitUntilStopped({ timeoutMs: 3_600_000 });
  const seconds = (performance.now() - t0) / 1000;
  if (final.status !== 'finished') throw new Error(`the long conversation ended ${final.status}: ${final.lastError}`);
  const perStep = (from: number) => ((at[from + window] ?? NaN) - (at[from] ?? NaN)) / window;

  // Each continue-as-new's input is the state carried to the next run: follow the chain of runs.
  const carriedBytes: number[] = [];
  const first = await h.client.workflow.getHandle(conversation.id).describe();
  let runId: string | undefined = first.raw.workflowExecutionInfo?.firstRunId ?? undefined;
  let runs = 0;
  while (runId) {
    runs++;
    const history = await h.client.workflow.getHandle(conversation.id, runId).fetchHistory();
    const last = history.events?.[history.events.length - 1];
    const can = last?.workflowExecutionContinuedAsNewEventAttributes;
    if (!can) break;
    carriedBytes.push((can.input?.payloads ?? []).reduce((n, p) => n + (p.data?.length ?? 0), 0));
    runId = can.newExecutionRunId ?? undefined;
  }
  return {
    steps,
    firstMsPerStep: perStep(0),
    lastMsPerStep: perStep(steps - window),
    workerRssMb: memoryMb(workerPid, 'VmRSS'),
    workerPeakRssMb: memoryMb(workerPid, 'VmHWM'),
    runs,
    carriedBytes,
    condensations,
    seconds,
  };
}

export function describeLong(f: LongFigures): string {
  const kb = (b: number) => (b / 1024).toFixed(1);
  const carried = f.carriedBytes.length
    ? `${kb(Math.min(...f.carriedBytes))}–${kb(Math.max(...f.carriedBytes))} KB (each: ${f.carriedBytes.map(kb).join(', ')})`
    : 'none';
  return (
    `one conversation of ${f.steps} steps with 20 KB observations (condenser on): ${f.firstMsPerStep.toFixed(1)} ms a step over the first 100, ` +
    `${f.lastMsPerStep.toFixed(1)} ms over the last 100 (×${(f.lastMsPerStep / f.firstMsPerStep).toFixed(2)}); ${f.seconds.toFixed(0)} s in all, ${f.condensations} condensations, ${f.runs} runs; ` +
    `worker ${f.workerRssMb.toFixed(0)} MB at the end (peak ${f.workerPeakRssMb.toFixed(0)} MB); carried by each continue-as-new: ${carried}`
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const steps = Number(process.argv[2] ?? 1000);
  const h = await startHarness({ name: 'bench-long', script: () => ({ content: 'ok' }), record: false });
  try {
    const worker = await h.startWorker();
    console.log(describeLong(await longConversation(h, worker.process.pid, steps)));
  } finally {
    await h.close();
  }
}
