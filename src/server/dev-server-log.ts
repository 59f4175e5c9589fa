// The dev server's own output (its banner, its WARN/ERROR lines, the burst of them a Ctrl-C
// brings) goes to a log file, not the terminal: `faheem server` prints its own lines, and reads
// the file back only to say why the server did not start or stopped.
import { closeSync, mkdirSync, openSync, readSync, fstatSync, writeSync } from 'node:fs';
import path from 'node:path';

/** Where `faheem server` on `port` leaves the Temporal dev server's output: under FAHEEM_HOME. */
export function devServerLogFile(home: string, port: number): string {
  return path.join(home, 'server', `temporal-${port}.log`);
}

/**
 * Makes the log (its folder too, private to the user) and appends a line marking this start, after
 * which the server's stdout and stderr are appended.
 */
export function startDevServerLog(file: string, now: Date = new Date()): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const fd = openSync(file, 'a', 0o600);
  try {
    writeSync(fd, `--- faheem server starting the Temporal dev server at ${now.toISOString()}\n`);
  } finally {
    closeSync(fd);
  }
}

/** The last `bytes` of a file (the newest lines of a log that only grows), '' when it cannot be read. */
export function logTail(file: string, bytes = 16_384): string {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const size = fstatSync(fd).size;
    const length = Math.min(bytes, size);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer.toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Why the dev server stopped, from the end of its log: its own `Error: …` line (a port it could not
 * bind), else the message of its last ERROR line; undefined when the log says nothing of it. Only
 * the lines after the last start marker count: an earlier run's errors are not this one's.
 */
export function devServerFailure(tail: string): string | undefined {
  const runs = tail.split(/^--- faheem server starting .*$/m);
  const lines = (runs[runs.length - 1] ?? '').split('\n').map((l) => l.trim());
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = /^Error: (.+)$/.exec(lines[i]!);
    if (m) return m[1];
  }
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!/\blevel=ERROR\b/.test(lines[i]!)) continue;
    const msg = /\bmsg="((?:[^"\\]|\\.)*)"/.exec(lines[i]!) ?? /\bmsg=(\S+)/.exec(lines[i]!);
    const error = /\berror="((?:[^"\\]|\\.)*)"/.exec(lines[i]!);
    if (msg) return error ? `${msg[1]}: ${error[1]}` : msg[1];
  }
  return undefined;
}
