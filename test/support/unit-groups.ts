// Which unit files run in a process of their own: those that wait on real processes, git or timers
// (seconds each), so that they overlap; the rest share one process (unit-light.ts).

/** Unit test files (names in test/unit/) that run as files of their own. */
export const HEAVY_UNIT_FILES = [
  'shadow-repo.test.ts',
  'terminal.test.ts',
  'run-hooks.test.ts',
  'sandbox.test.ts',
  'llm-client.test.ts',
  'checkpoint-activities.test.ts',
  'checkpoint-watch.test.ts',
  'dev-server.test.ts',
  'checkpoint-objects.test.ts',
  'compile-cache.test.ts',
  'workspace-shipping.test.ts',
  'pool-hosts.test.ts',
];
