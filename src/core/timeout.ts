// The one promise-with-a-time-limit helper. Elsewhere: a Temporal client call takes
// `client.withDeadline(deadline, fn)` (a gRPC deadline), and a fetch or a child process takes
// `AbortSignal.timeout(ms)`; this is for the promises that take neither (an update's answer, a
// native connection). No Node imports.

/**
 * `work`'s result, or the error `onTimeout()` makes once `ms` have passed without it settling. The
 * timer is cleared either way; `work` itself goes on (give it a signal to stop it).
 *
 * ```ts
 * await withTimeout(conversation.pause(), 10_000, () => new NoWorkerError('no worker answered within 10 s'));
 * ```
 */
export async function withTimeout<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
