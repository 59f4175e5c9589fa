// The files of src/ that may read process.env: eslint.config.js bans it everywhere else, and
// test/unit/environment.test.ts holds that exactly these read it.
/**
 * The files that may read process.env. The entry points read it once (the CLI, `faheem acp`,
 * createWorker, the client's connection); the rest read it where the process itself is the subject.
 */
export const ENVIRONMENT_READERS = [
  // Entry points: the environment, read once into Settings.
  'src/cli/index.ts',
  'src/cli/acp.ts',
  'src/worker.ts',
  'src/connection.ts', // the client's edge (the SDK, the console); gRPC's proxy variables
  // Process-wide: the Temporal CLI the dev server runs, the spawn helper (one a process, started
  // from the allow-listed variables only), and the host programs the sandbox finds on this PATH.
  'src/server/temporal-cli.ts',
  'src/tools/spawner.ts',
  'src/tools/sandbox.ts',
  // A default for the SDK's tools and MCP manager used on their own; createWorker passes its own.
  'src/tools/builtin.ts',
  'src/tools/terminal.ts',
  'src/mcp/manager.ts',
];
