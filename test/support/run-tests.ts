// Runs the test layers: `node --import tsx test/support/run-tests.ts [unit] [workflow] [fast] [e2e] [all] [python] [files…]`,
// building dist/ first when src/ changed since the last build (FAHEEM_TEST_NO_BUILD=1 skips that).
// One Temporal dev server is started for the whole run and handed to the test files
// (FAHEEM_TEST_TEMPORAL_ADDRESS): each file takes a namespace of its own on it (test/support/namespace.ts),
// so files can run side by side. Files that kill, restart or look at a server (a SQLite file, the
// Web UI) still start their own. `all` also runs any test/*.test.ts left at the top, so that a test
// added there is never skipped. Prints the time of each layer and of each file's tests.
// `all` runs the fast gate first (the unit and workflow layers, side by side), and the e2e layer
// only when the gate passed (FAHEEM_TEST_KEEP_GOING=1 runs it anyway), so a break shows early.
// `fast` (`npm run test:fast`) runs that gate alone.
// How many files run at once follows the cores this process may use (os.availableParallelism(),
// which honours `taskset`); FAHEEM_E2E_CONCURRENCY overrides it for the e2e layer.
// `python` (never part of `all`) runs the Python client's pytest suite (python/tests) with the
// interpreter FAHEEM_TEST_PYTHON (default .faheem/python-venv/bin/python, made by python/scripts/venv.sh)
// against the same shared dev server.
// FAHEEM_TEST_COVERAGE=1 measures the line and branch coverage of src/ that the test processes run
// (Node's own, mapped to the TypeScript by tsx's source maps) and prints it at the end.
import { execa } from 'execa';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { procStatFields } from '../../src/sandbox/proc-stat.js';
import type { DevServer } from '../../src/server/dev-server.js';
import { concurrency } from './concurrency.js';
import { mergeCoverage, percent, summarise, type Coverage } from './coverage-sum.js';
import { ROOT, startDevServerOnFreePorts } from './harness.js';
import { HEAVY_UNIT_FILES, unitTestFiles } from './unit-groups.js';
import { distIsFresh } from '../../scripts/dist-fresh.mjs';

const CORES = availableParallelism();

const LAYERS = {
  unit: { dirs: ['test/unit'], concurrency: concurrency('unit', CORES) },
  workflow: { dirs: ['test/workflow'], concurrency: concurrency('workflow', CORES) },
  e2e: { dirs: ['test/e2e', 'test'], concurrency: concurrency('e2e', CORES, process.env.FAHEEM_E2E_CONCURRENCY) },
} as const;
type Layer = keyof typeof LAYERS;

function testFiles(dir: string): string[] {
  if (dir === 'test/unit') return unitFiles();
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.test.ts'))
    .map((e) => path.join(dir, e.name))
    .sort();
}

/**
 * test/unit mirrors src/, so its files are in subfolders too. The light ones run in one process
 * (test/support/unit-light.ts), the heavy ones as their own; a heavy entry that names no file fails
 * the run (a moved file would otherwise join the light process unnoticed).
 */
function unitFiles(): string[] {
  const files = unitTestFiles(path.join(ROOT, 'test/unit'));
  const gone = HEAVY_UNIT_FILES.filter((f) => !files.includes(f));
  if (gone.length > 0) throw new Error(`test/support/unit-groups.ts names unit files that do not exist: ${gone.join(', ')}`);
  return [...HEAVY_UNIT_FILES.map((f) => `test/unit/${f}`).sort(), 'test/support/unit-light.ts'];
}

// The slowest files first, so that they do not end the run alone (measured on 2 cores; others in name
// order). The order is for speed only: no test depends on what runs beside it.
const SLOW_FIRST = [
  'pool',
  'package',
  'sandbox',
  'acp',
  'parity',
  'encryption',
  'scale-out',
  'recovery',
  'clients',
  'conversation',
  'cli',
  'workspace-host',
];
function order(files: string[]): string[] {
  const rank = (f: string) => {
    const i = SLOW_FIRST.indexOf(path.basename(f, '.test.ts'));
    return i < 0 ? SLOW_FIRST.length : i;
  };
  return [...files].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

// The gate's slowest files first (measured in CI), so that none of them starts last and ends the gate
// alone: the replay of every recorded history (one replay worker, one core), then the longer workflow
// files; the rest keep their order. (Three replay files side by side cost 16 CPU-s more, each
// loading the bundle and its source map again, and made a loaded CI's gate slower: 115 s against 104.)
const GATE_SLOW_FIRST = [
  'test/workflow/replay.test.ts',
  'test/workflow/conversation.test.ts',
  'test/workflow/long-conversation.test.ts',
  'test/workflow/confirmation-and-runs.test.ts',
];
function gateOrder(files: string[]): string[] {
  const rank = (f: string) => {
    const i = GATE_SLOW_FIRST.indexOf(f);
    return i < 0 ? GATE_SLOW_FIRST.length : i;
  };
  return [...files].sort((a, b) => rank(a) - rank(b));
}

/**
 * Worker processes and the workflow tests run dist/: build unless it is newer than everything it is
 * made from (scripts/dist-fresh.mjs, which `prepare` asks too). `npm ci` has just built through
 * `prepare`, so CI does not build twice.
 */
async function buildIfStale(): Promise<void> {
  if (distIsFresh(ROOT)) {
    console.log('== build: dist/ is newer than src/ and the build files; not built again');
    return;
  }
  const t0 = Date.now();
  await execa('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  console.log(`== build took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  // Test files named on the command line run as one group, at the e2e concurrency.
  const named = args.filter((a) => a.endsWith('.test.ts'));
  const python = args.includes('python');
  const asked = args.filter((a) => !a.endsWith('.test.ts') && a !== 'python');
  // `python` alone runs only pytest.
  const onlyPython = python && asked.length === 0 && named.length === 0;
  // `fast`: the gate alone (the unit and workflow layers, side by side).
  const fast = asked.includes('fast');
  const layers: Layer[] = onlyPython
    ? []
    : asked.includes('all') || (asked.length === 0 && named.length === 0)
      ? ['unit', 'workflow', 'e2e']
      : fast
        ? ['unit', 'workflow']
        : (asked as Layer[]);
  if (fast && asked.length > 1) throw new Error('`fast` is the unit and workflow layers: give it alone');
  for (const l of layers) if (!(l in LAYERS)) throw new Error(`unknown layer ${l}: give unit, workflow, fast, e2e, all or python`);

  const needsDist = python || named.length > 0 || layers.some((l) => l !== 'unit');
  if (needsDist && process.env.FAHEEM_TEST_NO_BUILD !== '1') await buildIfStale();
  let server: DevServer | undefined;
  const env: Record<string, string> = {};
  if (needsDist && !process.env.FAHEEM_RECORD_HISTORIES) {
    const t0 = Date.now();
    server = await startDevServerOnFreePorts({ headless: true });
    env.FAHEEM_TEST_TEMPORAL_ADDRESS = server.address;
    if (server.httpUrl) env.FAHEEM_TEST_TEMPORAL_HTTP = server.httpUrl;
    env.FAHEEM_TEST_TEMPORAL_HTTP_HOST = server.httpHost;
    console.log(`== shared Temporal dev server on ${server.address} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  }
  const coverageOn = process.env.FAHEEM_TEST_COVERAGE === '1';
  let coverage: Coverage = {};
  const times: string[] = [];
  const timesFile = path.join(tmpdir(), `faheem-test-times-${process.pid}.txt`);
  let failed = false;
  try {
    // `all`: the fast gate (the workflow and unit files side by side), then the e2e files, only when
    // the gate passed. A layer asked for alone runs at its own concurrency.
    const filesOf = (l: Layer) => order(LAYERS[l].dirs.flatMap(testFiles));
    type Group = { layer: string; files: string[]; concurrency: number; gate?: boolean };
    const gateGroup = (): Group => ({
      layer: 'gate (workflow+unit)',
      files: gateOrder([...filesOf('workflow'), ...filesOf('unit')]),
      concurrency: LAYERS.workflow.concurrency,
      gate: true,
    });
    const groups: Group[] = onlyPython
      ? []
      : asked.includes('all') || asked.length === 0
        ? named.length > 0 && asked.length === 0
          ? []
          : [gateGroup(), { layer: 'e2e', files: filesOf('e2e'), concurrency: LAYERS.e2e.concurrency }]
        : fast
          ? [gateGroup()]
          : layers.map((layer) => ({ layer, files: filesOf(layer), concurrency: LAYERS[layer].concurrency }));
    if (named.length > 0) groups.push({ layer: 'files', files: order(named), concurrency: LAYERS.e2e.concurrency });
    console.log(`== ${CORES} core(s) available`);
    for (const { layer, files, concurrency, gate } of groups) {
      if (files.length === 0) continue;
      if (failed && process.env.FAHEEM_TEST_KEEP_GOING !== '1') {
        console.log(`== test:${layer}: not run, the gate failed (FAHEEM_TEST_KEEP_GOING=1 runs it anyway)`);
        times.push(`${layer} not run`);
        continue;
      }
      console.log(`== test:${layer}: ${files.length} files, ${concurrency} at a time`);
      const t0 = Date.now();
      const reporters = [
        '--test-reporter=tap',
        '--test-reporter-destination=stdout',
        '--test-reporter=./test/support/file-times.mjs',
        `--test-reporter-destination=${timesFile}`,
      ];
      const coverageFile = path.join(tmpdir(), `faheem-test-coverage-${process.pid}.jsonl`);
      if (coverageOn) {
        reporters.push('--test-reporter=./test/support/coverage.mjs', `--test-reporter-destination=${coverageFile}`);
      }
      const coverageArgs = coverageOn ? ['--experimental-test-coverage', '--test-coverage-include=src/**'] : [];
      const cpuFile = path.join(tmpdir(), `faheem-test-cpu-${process.pid}.jsonl`);
      const r = await execa(
        process.execPath,
        [
          '--import',
          'tsx',
          '--import',
          './test/support/cpu-account.mjs',
          '--test',
          // A file whose tests all ended exits even if a timer or socket was left behind (a sandbox file
          // once hung 13 min after its last test passed): the run must end, and its results stand.
          '--test-force-exit',
          ...coverageArgs,
          `--test-concurrency=${concurrency}`,
          ...reporters,
          ...files,
        ],
        { cwd: ROOT, env: { ...env, FAHEEM_TEST_CPU_FILE: cpuFile }, stdio: 'inherit', reject: false },
      );
      if (existsSync(coverageFile)) {
        for (const line of readFileSync(coverageFile, 'utf8').split('\n').filter(Boolean)) {
          coverage = mergeCoverage(coverage, JSON.parse(line) as Coverage);
        }
        rmSync(coverageFile);
      }
      if (existsSync(timesFile)) {
        console.log(readFileSync(timesFile, 'utf8'));
        rmSync(timesFile);
      }
      if (existsSync(cpuFile)) {
        console.log(cpuReport(readFileSync(cpuFile, 'utf8'), (Date.now() - t0) / 1000));
        rmSync(cpuFile);
      }
      const took = `${layer} ${((Date.now() - t0) / 1000).toFixed(1)} s${r.exitCode === 0 ? '' : ` (failed, exit ${r.exitCode})`}`;
      times.push(took);
      console.log(`== test:${took}`);
      if (r.exitCode !== 0) failed = true;
      if (gate && r.exitCode !== 0) console.log(`== the gate failed: see the 'not ok' lines above`);
    }
    if (python) {
      const interpreter = process.env.FAHEEM_TEST_PYTHON || path.join(ROOT, '.faheem', 'python-venv', 'bin', 'python');
      console.log(`== test:python: pytest python/tests with ${interpreter}`);
      const t0 = Date.now();
      const r = await execa(interpreter, ['-m', 'pytest', 'python/tests', '-q'], { cwd: ROOT, env, stdio: 'inherit', reject: false });
      const took = `python ${((Date.now() - t0) / 1000).toFixed(1)} s${r.exitCode === 0 ? '' : ` (failed, exit ${r.exitCode ?? r.code})`}`;
      times.push(took);
      console.log(`== test:${took}`);
      if (r.exitCode !== 0) failed = true;
    }
  } finally {
    const serverCpu = processCpuSeconds(server?.process.pid);
    if (serverCpu !== undefined) console.log(`== the shared dev server used ${serverCpu.toFixed(1)} CPU-s`);
    await server?.stop();
  }
  if (coverageOn) console.log(await coverageReport(coverage));
  console.log(`== test times: ${times.join(', ')}`);
  return failed ? 1 : 0;
}

/** The run's coverage of src/ as the lines the CI prints; the files no test loaded count as not run. */
async function coverageReport(coverage: Coverage): Promise<string> {
  const sources = new Map<string, number>();
  for (const entry of await readdir(path.join(ROOT, 'src'), { recursive: true })) {
    if (!entry.endsWith('.ts') || entry.endsWith('.d.ts')) continue;
    const file = path.join(ROOT, 'src', entry);
    sources.set(file, readFileSync(file, 'utf8').split('\n').length - 1);
  }
  const s = summarise(coverage, sources);
  return [
    `== coverage of src/ (Node's own, over the ${s.loadedFiles} files the tests loaded): lines ${percent(s.lines)}, branches ${percent(s.branches)}`,
    `== ${s.unloaded.files} files of src/ no test loaded (${s.unloaded.lines} lines); counted as not run, lines ${percent(s.allLines)}`,
  ].join('\n');
}

/** CPU-seconds a live process has used so far (its own), from /proc; undefined where there is none. */
function processCpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  const fields = procStatFields(pid);
  return fields ? (Number(fields[11]) + Number(fields[12])) / 100 : undefined;
}

/** The CPU each test file used (cpu-account.mjs's lines), most first, and the share of the cores the group kept busy. */
function cpuReport(lines: string, wallS: number): string {
  const rows = lines
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { file: string; cpuS: number })
    .sort((a, b) => b.cpuS - a.cpuS);
  const total = rows.reduce((s, r) => s + r.cpuS, 0);
  const body = rows.map((r) => `${r.cpuS.toFixed(1).padStart(7)} s  ${path.relative(ROOT, path.resolve(ROOT, r.file))}`).join('\n');
  return `== CPU per test file (its processes and those it waited for): ${total.toFixed(0)} CPU-s in ${wallS.toFixed(0)} s on ${CORES} core(s)\n${body}\n`;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
