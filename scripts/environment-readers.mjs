// The files of src/ that may read process.env: eslint.config.js bans it everywhere else, and
// test/unit/environment.test.ts holds that exactly these read it.
/**
 * The files that may read process.env: the entry points, each reading it once (the CLI, `faheem
 * acp`, createWorker, the client's connection). Everything below them takes what it needs as a
 * parameter: Settings, a ChildEnv for a child process's environment, or a value such as
 * TEMPORAL_CLI's; the spawn helper's environment is set once a process by the entry point
 * (setUpSpawner), and the sandbox finds its programs on the PATH of the worker's environment.
 */
export const ENVIRONMENT_READERS = [
  'src/cli/index.ts',
  'src/cli/acp.ts',
  'src/worker.ts',
  'src/connection.ts', // the client's edge (the SDK, the console); gRPC's proxy variables
];
