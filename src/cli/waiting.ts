// The CLI's waiting commands (`--wait`, `--follow`): a watch on whether a worker is there (a warning
// within seconds when none is, saying what to start; the wait goes on), a time limit when asked
// for, and Temporal's raw errors turned into a line that says what happened.
import { ServiceError, isGrpcServiceError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { FaheemError, NoWorkerError } from '../core/errors.js';
import { conversationQueues, noToolWorker, noWorkflowWorker, queuePollers } from './presence.js';

/** gRPC status codes (the ones these errors carry). */
const grpcStatus = { CANCELLED: 1, DEADLINE_EXCEEDED: 4, RESOURCE_EXHAUSTED: 8, UNAVAILABLE: 14 } as const;

/** How often a waiting command asks whether a worker polls the conversation's queues. */
const PRESENCE_EVERY_MS = 10_000;

/** The first look comes at once; the next ones every PRESENCE_EVERY_MS (a describeTaskQueue call each). */
export interface WorkerWatch {
  /** Resolves once a worker polls the conversation's task queue (at once when one does). */
  present(): Promise<void>;
  /** Resolves when the conversation's workflow has completed (closed, or its idle timeout). */
  completed: Promise<void>;
  stop(): void;
}

/**
 * Watches whether a worker polls conversation `id`'s task queue and tool queue while a command
 * waits on it: when none does, one warning through `warn` (what to start; the wait goes on), and
 * one line when a worker is back. `explain`, asked at each look while a worker is there: a line
 * saying what a call of the conversation waits for (once per key), or null.
 */
export function watchWorker(
  client: Client,
  id: string,
  warn: (line: string) => void,
  explain?: (d: WorkflowExecutionDescription) => Promise<{ key: string; line: string } | null>,
): WorkerWatch {
  const said = new Set<string>();
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let polling: boolean | undefined;
  let waiters: (() => void)[] = [];
  let markCompleted = () => undefined as void;
  const completed = new Promise<void>((resolve) => (markCompleted = resolve));
  const look = async () => {
    // The main queue first (the describe names it): the warning must not wait for the tool queue,
    // which is read from the start input (one more call).
    const d = await client.workflow
      .getHandle(id)
      .describe()
      .catch(() => undefined);
    if (!d) return;
    if (d.status.name !== 'RUNNING') markCompleted();
    const tools =
      polling === undefined
        ? conversationQueues(client, id)
            .then((q) => (q.toolTaskQueue ? queuePollers(client, q.toolTaskQueue, 'activity') : undefined))
            .catch(() => undefined)
        : undefined;
    const main = await queuePollers(client, d.taskQueue, 'workflow').catch(() => undefined);
    if (!main) return;
    if (!main.polling && polling !== false) {
      warn(
        `warning: ${noWorkflowWorker(main)}: start one with \`npx faheem worker\` against this server; still waiting ` +
          '(Ctrl-C stops waiting, --timeout SECONDS gives up)',
      );
    } else if (main.polling && polling === false) {
      warn(`a worker polls ${main.queue} again; going on`);
    }
    const first = polling === undefined;
    polling = main.polling;
    if (polling) {
      for (const w of waiters) w();
      waiters = [];
    }
    // Once, at the first look: the workspace host's tool queue.
    const toolPollers = first ? await tools : undefined;
    if (toolPollers && !toolPollers.polling) {
      warn(`warning: ${noToolWorker(toolPollers)}: its commands and edits wait until the workspace host runs \`npx faheem worker\``);
    } else if (polling && explain && d.status.name === 'RUNNING') {
      const wait = await explain(d).catch(() => null);
      if (wait && !said.has(wait.key)) {
        said.add(wait.key);
        warn(wait.line);
      }
    }
  };
  const loop = async () => {
    await look().catch(() => undefined);
    if (!stopped) timer = setTimeout(() => void loop(), polling === false ? PRESENCE_EVERY_MS / 5 : PRESENCE_EVERY_MS);
  };
  void loop();
  return {
    present: () => (polling ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
    completed,
    stop() {
      stopped = true;
      clearTimeout(timer);
      for (const w of waiters) w();
      waiters = [];
    },
  };
}

/**
 * Whether `err` means that no worker answered in time (a query or an update the server gave up on),
 * as opposed to a refusal or a missing conversation: a waiting command waits for a worker and asks again.
 */
export function isUnanswered(err: unknown): boolean {
  if (err instanceof NoWorkerError) return true;
  if (err instanceof FaheemError) return false;
  const grpc = grpcOf(err);
  return (
    grpc !== undefined && ([grpcStatus.DEADLINE_EXCEEDED, grpcStatus.UNAVAILABLE, grpcStatus.CANCELLED] as number[]).includes(grpc.code)
  );
}

function grpcOf(err: unknown): { code: number; details?: string } | undefined {
  if (isGrpcServiceError(err)) return err;
  if (err instanceof ServiceError && isGrpcServiceError(err.cause)) return err.cause;
  return undefined;
}

/**
 * A raw Temporal error as the line the CLI prints ("Failed to query Workflow" says nothing a user
 * can act on); undefined when `err` is not one of those.
 */
export function describeTemporalError(err: unknown, address: string): string | undefined {
  const grpc = grpcOf(err);
  if (!grpc) return undefined;
  switch (grpc.code) {
    case grpcStatus.DEADLINE_EXCEEDED:
      return `no answer in time: is \`npx faheem worker\` running against the Temporal server at ${address}?`;
    case grpcStatus.UNAVAILABLE:
      return `lost the Temporal server at ${address} (${grpc.details ?? 'unavailable'}); is \`npx faheem server\` still running?`;
    case grpcStatus.RESOURCE_EXHAUSTED:
      return `the Temporal server at ${address} is busy (${grpc.details ?? 'resource exhausted'}); try again`;
    default:
      return `the Temporal server at ${address} refused the call: ${grpc.details ?? `gRPC status ${grpc.code}`}`;
  }
}

/** Resolves after `ms`; the timer does not keep the process alive. */
export const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
