// The CLI's timing rules for telling whether a worker is there, in a module that loads nothing
// (the quick paths in ./quick.ts use them without the SDK).

/**
 * The server lists a worker that stopped for about 5 minutes after its last poll, and a live idle
 * worker's last poll can be up to a minute old (a long poll): a poller counts as present when it
 * polled within this time.
 */
export const POLLER_FRESH_MS = 75_000;

/** Wait this long for the `state` query before asking whether any worker is there to answer it. */
export const QUICK_ANSWER_MS = 900;

/** How long the CLI waits for a worker to answer an update before saying none did. */
export const UPDATE_TIMEOUT_MS = 30_000;
