// The package as a user gets it: `npm pack` the repo (npm test has built dist/ first), install the
// tarball into an empty project that has no TypeScript and no tsx, run a conversation with a custom
// tool from a plain .mjs file under `node`, and typecheck a TypeScript consumer against the
// installed declarations (one file must compile, one with a deliberate type error must not).
import { execa } from 'execa';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Connection } from '@temporalio/client';
import type { DevServer } from '../../src/server/dev-server.js';
import { FAKE_KEY, ROOT, startDevServerOnFreePorts } from '../support/harness.js';
import { testNamespace } from '../support/namespace.js';

let dir: string;
let project: string;
let packedFiles: string[] = [];
/** The dev server of this file's own (only when the run has no shared one). */
let server: DevServer | undefined;
/** Where the plain-Node conversation runs: the run's shared dev server and a namespace of its own. */
let temporal: { address: string; namespace: string } | undefined;
/** Both consumer files in one tsc program, started once the package is installed (see its test). */
let typecheck: Promise<{ exitCode?: number; all?: string }> | undefined;

before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'faheem-package-'));
  const [installed, started] = await Promise.allSettled([
    packAndInstall().then(() => {
      typecheck = typecheckConsumers();
      typecheck.catch(() => undefined); // awaited (and so reported) by its test
    }),
    temporalServer(),
  ]);
  if (started.status === 'fulfilled') temporal = started.value;
  for (const r of [installed, started]) if (r.status === 'rejected') throw r.reason;
});

/** The run's shared dev server (run-tests.ts), in a namespace of this file's own; else a server of its own. */
async function temporalServer(): Promise<{ address: string; namespace: string }> {
  const shared = process.env.FAHEEM_TEST_TEMPORAL_ADDRESS;
  if (!shared) {
    server = await startDevServerOnFreePorts({ headless: true });
    return { address: server.address, namespace: 'default' };
  }
  const connection = await Connection.connect({ address: shared });
  try {
    return { address: shared, namespace: await testNamespace(connection, 'package') };
  } finally {
    await connection.close();
  }
}

after(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/**
 * The environment for the npm commands, less what `npm test` tells its script about this repo
 * (npm_config_local_prefix, npm_package_*, npm_lifecycle_*, INIT_CWD): the consumer project is
 * another project. The user's own npm settings (registry, cache) stay.
 */
function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(npm_config_local_prefix|npm_package_.*|npm_lifecycle_.*|INIT_CWD)$/i.test(k)),
  );
}

async function packAndInstall(): Promise<void> {
  // --ignore-scripts: no `prepare` (a second build); npm test has just built dist/.
  const packed = await execa('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
    cwd: ROOT,
    env: npmEnv(),
    extendEnv: false,
  });
  const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
  packedFiles = info!.files.map((f) => f.path);
  const tarball = path.join(dir, info!.filename);

  project = path.join(dir, 'project');
  await mkdir(project);
  await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'faheem-consumer', private: true, type: 'module' }, null, 2));
  // The consumer imports zod itself (for its tool's schema), so it depends on zod too: the same range.
  const ours = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  // --ignore-scripts: faheemcode has no install scripts of its own (only `prepare`, which a tarball
  // install does not run); those of its dependencies (protobufjs's and @swc/core's postinstall) are
  // theirs, and the package must work without them.
  const flags = ['--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts'];
  await execa('npm', ['install', tarball, `zod@${ours.dependencies.zod}`, ...flags], {
    cwd: project,
    env: npmEnv(),
    extendEnv: false,
  });
}

test('the tarball holds the build and no tests; installing it brings no TypeScript or tsx', () => {
  for (const f of [
    'dist/index.js',
    'dist/index.d.ts',
    'dist/worker.js',
    'dist/testing/index.js',
    'dist/connection.d.ts',
    'dist/workflow-bundle.js',
    'dist/cli/index.js',
    'dist/console/index.html',
    'dist/console/app.js',
    'dist/console/app.css',
    'bin/faheem.js',
  ]) {
    assert.ok(packedFiles.includes(f), `${f} is in the package`);
  }
  assert.deepEqual(
    packedFiles.filter((f) => f.startsWith('test/') || f.startsWith('examples/') || f.startsWith('bench/')),
    [],
  );
  const modules = path.join(project, 'node_modules');
  assert.ok(existsSync(path.join(modules, 'faheemcode', 'dist', 'index.js')));
  assert.ok(!existsSync(path.join(modules, 'tsx')), 'tsx is not installed with faheemcode');
  assert.ok(!existsSync(path.join(modules, 'typescript')), 'typescript is not installed with faheemcode');
});

const RUN_MJS = `
import { Agent, Conversation, FileEditorTool, LLM, TerminalTool, connectClient, defineTool } from 'faheemcode';
import { createWorker, workflowSource } from 'faheemcode/worker';
import { startScriptedModel } from 'faheemcode/testing';
import { mkdtemp } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

const addNumbers = defineTool({
  name: 'add_numbers',
  description: 'Add two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  retry: 'repeat',
  execute: async ({ a, b }) => String(a + b),
});

// First reply: call add_numbers; once its result is in the prompt: a text answer (the run ends).
const model = await startScriptedModel((request) =>
  request.body.messages.some((m) => m.role === 'tool')
    ? { content: 'The sum is 5.' }
    : { toolCalls: [{ name: 'add_numbers', arguments: { a: 2, b: 3 } }] },
);
process.env.LLM_BASE_URL = model.baseUrl;
const worker = await createWorker({ tools: [addNumbers] });
const running = worker.run();
const client = await connectClient();
try {
  const conversation = await Conversation.create(client, {
    agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: [TerminalTool, FileEditorTool, addNumbers] }),
    workspace: await mkdtemp(path.join(process.cwd(), 'workspace-')),
  });
  await conversation.sendMessage('What is 2 + 3?');
  const final = await conversation.run();
  const observation = (await conversation.events()).find((e) => e.kind === 'observation' && e.tool === 'add_numbers');
  console.log(JSON.stringify({ status: final.status, lastError: final.reason, observation: observation?.content ?? null, workflowSource: workflowSource() }));
} finally {
  await client.connection.close();
  worker.shutdown();
  await running;
  await model.close();
}
`;

test('from plain Node: a worker with a custom tool runs a conversation that calls it', async () => {
  const home = await mkdtemp(path.join(tmpdir(), 'faheem-package-home-'));
  try {
    await writeFile(path.join(project, 'run.mjs'), RUN_MJS);
    // Only what a user would set: nothing from this repo's environment (no FAHEEM_WORKFLOW_BUNDLE).
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? home,
      TEMPORAL_ADDRESS: temporal!.address,
      TEMPORAL_NAMESPACE: temporal!.namespace,
      LLM_API_KEY: FAKE_KEY,
      FAHEEM_HOME: home,
      NO_COLOR: '1',
    };
    const r = await execa('node', ['run.mjs'], { cwd: project, env, extendEnv: false, reject: false, all: true, timeout: 120_000 });
    assert.equal(r.exitCode, 0, r.all);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as {
      status: string;
      lastError: string | null;
      observation: string | null;
      workflowSource: { workflowBundle?: { codePath: string } };
    };
    assert.equal(out.status, 'finished', `status ${out.status} (${out.lastError})\n${r.all}`);
    assert.equal(out.observation, '5');
    // The worker loaded the bundle built into the package: no webpack at start.
    assert.equal(
      out.workflowSource.workflowBundle?.codePath,
      path.join(project, 'node_modules', 'faheemcode', 'dist', 'workflow-bundle.js'),
    );
  } finally {
    await rm(home, { recursive: true, force: true });
  }
});

const CONSUMER_TS = `
import { Agent, Conversation, LLM, TerminalTool, connectClient, defineTool, type ConversationState, type RunResult } from 'faheemcode';
import { createWorker } from 'faheemcode/worker';
import { startScriptedModel, type ScriptedModel } from 'faheemcode/testing';
import { z } from 'zod';

export const addNumbers = defineTool({
  name: 'add_numbers',
  description: 'Add two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  retry: 'repeat',
  execute: async ({ a, b }) => {
    const sum: number = a + b;
    return String(sum);
  },
});
export const toolName: string = addNumbers.name;

export async function main(): Promise<ConversationState['status']> {
  const model: ScriptedModel = await startScriptedModel(() => ({ content: 'hi' }));
  const worker = await createWorker({ tools: [addNumbers], env: { ...process.env, LLM_BASE_URL: model.baseUrl } });
  const queues: string = \`\${worker.taskQueue} and \${worker.toolTaskQueue}\`;
  console.log(queues);
  const running: Promise<void> = worker.run();
  const client = await connectClient();
  const conversation: Conversation = await Conversation.create(client, {
    agent: new Agent({ llm: new LLM({ model: 'openai/gpt-4o-mini' }), tools: [TerminalTool, addNumbers] }),
    workspace: process.cwd(),
  });
  const final: RunResult = await conversation.run();
  worker.shutdown();
  await running;
  await model.close();
  return final.status;
}
`;

const BROKEN_TS = `
import { defineTool } from 'faheemcode';
import { z } from 'zod';

// The arguments' types come from the schema: \`a\` is a number, so this must not compile.
export const broken = defineTool({
  name: 'shout',
  description: 'Shout',
  parameters: z.object({ a: z.number() }),
  execute: async ({ a }) => a.toUpperCase(),
});
`;

/**
 * consumer.ts and broken.ts in one tsc program (both are modules: neither sees the other's names),
 * so the installed declarations are read and checked once rather than by two compilers side by side.
 * Started from `before` once the package is installed, so it runs while the plain-Node conversation does.
 */
async function typecheckConsumers(): Promise<{ exitCode?: number; all?: string }> {
  await writeFile(path.join(project, 'consumer.ts'), CONSUMER_TS);
  await writeFile(path.join(project, 'broken.ts'), BROKEN_TS);
  const tsc = path.join(ROOT, 'node_modules', '.bin', 'tsc');
  // The project has no TypeScript: the repo's compiler, and its @types/node as a user would have.
  // skipLibCheck as most projects set it (without it, @temporalio/common's time.d.ts fails: it
  // imports \`ms\`, whose types NodeNext does not find); the declarations' imports are checked below.
  const flags = [
    '--module',
    'nodenext',
    '--moduleResolution',
    'nodenext',
    '--target',
    'es2022',
    '--strict',
    '--skipLibCheck',
    '--noEmit',
    '--pretty',
    'false',
    '--types',
    'node',
    '--typeRoots',
    path.join(ROOT, 'node_modules', '@types'),
  ];
  return execa(tsc, [...flags, 'consumer.ts', 'broken.ts'], { cwd: project, reject: false, all: true });
}

test('a TypeScript consumer typechecks against the installed declarations (and a type error is caught)', async () => {
  const r = await typecheck!;
  const diagnostics = (r.all ?? '').split('\n').filter((l) => l.trim() !== '');
  // consumer.ts compiles: no diagnostic but broken.ts's (each starts a line with its file; the
  // indented lines under one are its details).
  assert.deepEqual(
    diagnostics.filter((l) => !/^\s/.test(l) && !l.startsWith('broken.ts(')),
    [],
    `consumer.ts should compile:\n${r.all}`,
  );
  // broken.ts does not.
  assert.notEqual(r.exitCode, 0, 'broken.ts should not compile');
  assert.match(r.all ?? '', /broken\.ts\(\d+,\d+\): error TS2339: Property 'toUpperCase' does not exist on type 'number'/);
});

test("the declarations import only their own files, Node and the package's dependencies", async () => {
  // Under skipLibCheck an import a user cannot resolve (a devDependency's types, a file left out
  // of the package) silently becomes \`any\`; this finds it instead.
  const pkgDir = path.join(project, 'node_modules', 'faheemcode');
  const pkg = JSON.parse(await readFile(path.join(pkgDir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const problems: string[] = [];
  for (const file of (await readdir(path.join(pkgDir, 'dist'), { recursive: true })).filter((f) => f.endsWith('.d.ts'))) {
    // Without comments: TSDoc examples hold import lines too.
    const text = (await readFile(path.join(pkgDir, 'dist', file), 'utf8'))
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/(?!\/ <reference).*$/gm, '');
    for (const [, spec] of text.matchAll(/(?:from\s+|import\(\s*|require\(\s*|<reference types=)["']([^"']+)["']/g)) {
      if (spec!.startsWith('.')) {
        const target = path.resolve(path.dirname(path.join(pkgDir, 'dist', file)), spec!.replace(/\.js$/, '.d.ts'));
        if (!existsSync(target)) problems.push(`${file}: ${spec} (no ${path.relative(pkgDir, target)})`);
      } else if (!spec!.startsWith('node:') && !isBuiltin(spec!)) {
        const name = spec!.startsWith('@') ? spec!.split('/').slice(0, 2).join('/') : spec!.split('/')[0]!;
        if (!(name in pkg.dependencies)) problems.push(`${file}: ${spec} (not a dependency)`);
      }
    }
  }
  assert.deepEqual(problems, []);
});
