// What a command says it did, and how a waiting command exits: the lines of the mutating commands
// and the exit codes of `--wait` and `--follow` (CONTRACT, "CLI outcomes"). Pure: no Temporal here.
import type { ConversationStatus } from '../core/types.js';
import { oneLine } from '../core/text.js';

export { lastPauseReason } from '../conversation/stop-reason.js';

/** The exit codes of `--wait` and `--follow`, by how the run (or, for `events --follow`, the conversation) ended. */
export const EXIT = {
  finished: 0,
  error: 1,
  stuck: 2,
  /** Paused by someone else: a `faheem pause`, the budget, a hook, a rewind. */
  paused: 3,
  /** Actions wait for `faheem approve` or `faheem reject`. */
  confirmation: 4,
  /** `--timeout` ran out first (as timeout(1) does). */
  timeout: 124,
} as const;

/** How a waited-for run ended: the exit code and the line for stderr. */
export interface Outcome {
  code: number;
  /** One line: the status and why (`conv-1 error: …`). */
  line: string;
  /** Whether it is worth a line under `--quiet` (anything but a plain finish). */
  failed: boolean;
  /** A finish with an output schema: the answer's JSON value (printed on stdout as JSON). */
  output?: unknown;
}

/** What the state tells of a stopped run (the fields the outcome reads). */
export interface StoppedRun {
  id: string;
  status: ConversationStatus;
  lastError: string | null;
  closed?: boolean;
  finalMessage?: string | null;
  pendingActions?: readonly unknown[];
  output?: unknown;
}

/**
 * The outcome of a run that stopped in `s`; `pauseReason` is the reason of the last pause event
 * (who paused it), when the status is paused.
 */
export function outcomeOf(s: StoppedRun, pauseReason?: string): Outcome {
  const why = (text: string | null | undefined) => (text ? `: ${oneLine(text, 300)}` : '');
  switch (s.status) {
    case 'finished':
      return {
        code: EXIT.finished,
        line: `${s.id} finished${s.output !== undefined ? ' with output matching its schema' : why(s.finalMessage)}`,
        failed: false,
        ...(s.output !== undefined ? { output: s.output } : {}),
      };
    case 'error':
      return { code: EXIT.error, line: `${s.id} error${why(s.lastError ?? 'the run ended in an error')}`, failed: true };
    case 'stuck':
      return { code: EXIT.stuck, line: `${s.id} stuck${why(s.lastError ?? 'the agent repeats itself')}`, failed: true };
    case 'paused':
      return {
        code: EXIT.paused,
        line: `${s.id} paused by someone else${why(pauseReason ?? 'a pause request')} (\`faheem resume ${s.id}\` goes on)`,
        failed: true,
      };
    case 'waiting_for_confirmation': {
      const n = s.pendingActions?.length ?? 0;
      return {
        code: EXIT.confirmation,
        line: `${s.id} waits for confirmation of ${n === 1 ? '1 action' : `${n} actions`}: \`faheem approve ${s.id}\` or \`faheem reject ${s.id}\``,
        failed: true,
      };
    }
    case 'idle':
    case 'running':
      // idle: nothing was left to run (a closed conversation ends idle too).
      return { code: EXIT.finished, line: `${s.id} ${s.closed ? 'closed' : s.status}`, failed: false };
  }
}

/** `faheem pause`'s line: what happened, and the status before it. */
export function pausedLine(id: string, before: string | null, now: boolean, workerPolling: boolean): string {
  if (!workerPolling) return `pause sent to ${id}; no worker runs it now, so it takes effect when one picks it up`;
  if (before === 'paused') return `${id} was already paused`;
  if (before === 'running') return `paused ${id}${now ? ', interrupting the running command' : ''} (was running)`;
  return `paused ${id} (was ${before ?? 'not yet started'})`;
}

/**
 * `faheem pause --wait`'s line, from the status the conversation answered once it applied the
 * pause: a conversation that was not running (idle, finished, …) is left as it was.
 */
export function appliedPauseLine(id: string, before: string | null, after: string, now: boolean): string {
  // Applied: a worker answered, so the line is the signal's with a worker there.
  return after === 'paused' ? pausedLine(id, before, now, true) : `${id} is ${after}: nothing to pause`;
}

/** `faheem send`'s line: the message queued, and how many wait. */
export function queuedLine(id: string, status: string, pendingMessages: number, ran: boolean): string {
  const waiting = `${pendingMessages} waiting`;
  if (ran || status === 'running') return `message queued (${waiting}); ${id} reads it before its next model call`;
  return `message queued (${waiting}); \`faheem resume ${id}\` runs it`;
}

/** `faheem resume`'s line, from the run update's answer (the status after it and the run number). */
export function resumedLine(id: string, answer: { runNumber: number; status: string }, before: string | null): string {
  if (answer.status === 'running' && before === 'running') return `${id} was already running (run ${answer.runNumber})`;
  if (answer.status === 'running') return `resumed ${id} (run ${answer.runNumber}, was ${before ?? 'idle'})`;
  return `${id} is ${answer.status}${before && before !== answer.status ? ` (was ${before})` : ''}: nothing to run`;
}

/** `faheem close`'s line. */
export function closedLine(id: string, before: string | null, closedNow: boolean): string {
  if (!closedNow) return `close sent to ${id}; no worker runs it now, so it closes when one picks it up`;
  return `closed ${id} (was ${before ?? 'idle'})`;
}

/** `faheem approve` / `faheem reject`'s line. */
export function answeredLine(id: string, verb: 'approved' | 'rejected', count: number, reason?: string): string {
  const what = count === 1 ? '1 action' : `${count} actions`;
  if (count === 0) return `nothing waited for confirmation in ${id}`;
  return `${verb} ${what} of ${id}${verb === 'rejected' && reason ? `: ${oneLine(reason, 200)}` : ''}`;
}
