// The spawn helper: a small Node process that starts the worker's terminal commands and runs its
// checkpoints' git calls, so the worker (hundreds of MB, whose every fork() costs milliseconds of
// its main thread) never forks for them.
// The worker forks it once and speaks to it over IPC; see spawner.ts for the protocol. It imports
// only Node's own modules, to stay small.
import { spawn, type ChildProcess } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import type { FromHelper, ToHelper } from './spawner.js';

interface Command {
  child: ChildProcess;
  /** Output messages handed to the channel but not yet written: the worker may be slow to read. */
  unsent: number;
}

/** A command's output waits (its pipes are not read) while this many messages are unsent. */
const MAX_UNSENT = 8;

const commands = new Map<number, Command>();

function send(message: FromHelper, done?: () => void): void {
  if (process.connected) process.send?.(message, undefined, undefined, done);
}

function start(m: Extract<ToHelper, { type: 'spawn' }>): void {
  let child: ChildProcess;
  try {
    child = spawn(m.file, m.args, { cwd: m.cwd, env: m.env, detached: m.detached, stdio: 'pipe' });
  } catch (err) {
    send({ type: 'spawn-error', id: m.id, message: (err as Error).message });
    return;
  }
  if (child.pid === undefined) {
    // Not started (no such program or directory): Node reports why on the next tick.
    child.once('error', (err) => send({ type: 'spawn-error', id: m.id, message: err.message }));
    for (const s of [child.stdin, child.stdout, child.stderr]) s?.destroy();
    return;
  }
  const cmd: Command = { child, unsent: 0 };
  commands.set(m.id, cmd);
  send({ type: 'spawned', id: m.id, pid: child.pid });

  let open = 2;
  let exited = false;
  const forget = () => {
    if (exited && open === 0) commands.delete(m.id);
  };
  child.on('error', () => undefined); // e.g. a failed kill; the exit still comes
  child.stdin?.on('error', () => undefined); // the command may exit before reading its input
  // stdout and stderr merged in arrival order, each decoded on its own (a character split across
  // two reads of one stream stays whole).
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) {
      open--;
      continue;
    }
    const decoder = new StringDecoder('utf8');
    stream.on('data', (chunk: Buffer) => sendOutput(m.id, cmd, decoder.write(chunk)));
    stream.on('end', () => sendOutput(m.id, cmd, decoder.end()));
    stream.on('error', () => undefined);
    stream.on('close', () => {
      if (--open > 0) return;
      send({ type: 'output-end', id: m.id });
      forget();
    });
  }
  child.on('exit', (code, signal) => {
    exited = true;
    send({ type: 'exit', id: m.id, code, signal });
    forget();
  });
}

/** A program run to its end: all its output in one answer (the worker's git calls). */
function run(m: Extract<ToHelper, { type: 'run' }>): void {
  let child: ChildProcess;
  try {
    child = spawn(m.file, m.args, { cwd: m.cwd, env: m.env, stdio: 'pipe' });
  } catch (err) {
    send({ type: 'run-error', id: m.id, message: (err as Error).message, code: (err as NodeJS.ErrnoException).code });
    return;
  }
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let failed = false;
  child.stdout?.on('data', (b: Buffer) => out.push(b));
  child.stderr?.on('data', (b: Buffer) => err.push(b));
  child.on('error', (e: NodeJS.ErrnoException) => {
    // Not started (no such program or directory); a failed kill of a running one is not ours to report.
    if (child.pid !== undefined) return;
    failed = true;
    send({ type: 'run-error', id: m.id, message: e.message, code: e.code });
  });
  child.on('close', (code, signal) => {
    if (!failed) send({ type: 'ran', id: m.id, code, signal, stdout: Buffer.concat(out), stderr: Buffer.concat(err) });
  });
  child.stdin?.on('error', () => undefined); // it may exit before reading its input
  child.stdin?.end(Buffer.from(m.input));
}

function sendOutput(id: number, cmd: Command, data: string): void {
  if (!data) return;
  cmd.unsent++;
  // Backpressure: a command printing faster than the worker reads waits, rather than this process
  // queueing its output in memory.
  if (cmd.unsent === MAX_UNSENT) for (const s of [cmd.child.stdout, cmd.child.stderr]) s?.pause();
  send({ type: 'output', id, data }, () => {
    cmd.unsent--;
    if (cmd.unsent === 0) for (const s of [cmd.child.stdout, cmd.child.stderr]) s?.resume();
  });
}

process.on('message', (m: ToHelper) => {
  const cmd = m.type === 'spawn' || m.type === 'run' ? undefined : commands.get(m.id);
  switch (m.type) {
    case 'spawn':
      start(m);
      break;
    case 'run':
      run(m);
      break;
    case 'stdin':
      cmd?.child.stdin?.write(m.data);
      break;
    case 'stdin-end':
      cmd?.child.stdin?.end();
      break;
    case 'drop-output':
      // The worker stopped reading (background jobs holding the pipes open): let go of the pipes.
      for (const s of [cmd?.child.stdout, cmd?.child.stderr]) s?.destroy();
      break;
  }
});

// The worker is gone (it exited or died): so is the helper. The commands are left running, as a
// worker's own detached children would be; bwrap's --die-with-parent ends sandboxed ones.
process.on('disconnect', () => process.exit(0));

send({ type: 'ready' });
