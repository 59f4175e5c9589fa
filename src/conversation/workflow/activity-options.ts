// How the conversation's activities are scheduled: timeouts, heartbeats, retries, cancellation.
import { ActivityCancellationType, type ActivityOptions } from '@temporalio/workflow';

// Model calls heartbeat while they run (src/client/pause-channel.ts): a dead worker is noticed within the
// 2 s heartbeat timeout, and a pause reaches the call through a worker command at once (or, on a
// server without them, in the answer to a heartbeat, sent every 100 ms then). A worker stalled
// that long loses the call to another: the request is made again and the stale one aborted; no step
// is lost. The timeout is four throttled heartbeats (two a second), so a busy machine does not lose
// calls to it (none lost with two `yes` beside the recovery bench: docs/benchmarks.md); 5 s made a
// lost worker's call wait ~4 s for its replacement.
// WAIT_CANCELLATION_COMPLETED: a resumed run never overlaps the aborted call.
export const MODEL_CALL: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '2 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  // A short first retry gets a model call going again soon after its worker died.
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
};

// A retried tool attempt whose predecessor began reports an interruption instead of running again
// (see the activities), so a few attempts are enough to get that report through a second worker.
export const TOOL_CALL: ActivityOptions = {
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '5 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '500 milliseconds', maximumAttempts: 5 },
};

// Preparing the tools on the workspace host may start MCP servers (npx can take a while). It is
// safe to run again, and a host's death (or a host too busy to beat for 10 s, as a survivor taking
// over a killed worker's conversations can be) takes an attempt each time: with 3 attempts, a
// conversation that a kill caught here failed 2 runs in 13 of the scale-out test. Ten attempts,
// at most 10 s apart: attempts that fail fast fail the conversation after ~65 s of backoff; one
// that keeps beating (an MCP server's npx that hangs) may use its whole 5 minutes each time.
export const PREPARE_TOOLS: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '10 seconds',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 10 },
};

// Checkpoints (a git snapshot of the workspace on its host): quick for small changes, but a first
// checkpoint of a big repository can take seconds. Safe to retry (a retried step returns the same).
export const CHECKPOINT: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', maximumAttempts: 5 },
};

// A webhook delivery (src/webhooks/deliver.ts, on the webhook worker's queue): one attempt is a
// 10 s POST; failures that may pass (no answer, 408, 429, 5xx, no webhook worker yet) are retried
// with back-off (1 s, 2 s, 4 s, … at most a minute apart) for 10 minutes in all, counted from the
// schedule, so a delivery never outlives its receiver's outage by more than that.
export const WEBHOOK_DELIVERY: ActivityOptions = {
  scheduleToCloseTimeout: '10 minutes',
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
};
