// CPU time a process tree has used (user + system), from /proc: what the concurrency bench divides by
// steps to say where a step's CPU goes (server, worker, client). A process's figure holds its threads
// and the children it has waited for; live children (the worker's spawn helper, a running command)
// are added from their own figures.
import { readdirSync } from 'node:fs';
import { procStatFields } from '../src/sandbox/proc-stat.js';

const TICK_MS = 10; // USER_HZ is 100 on Linux

function stat(pid: number): { ppid: number; ms: number } | undefined {
  const fields = procStatFields(pid)?.map(Number);
  if (!fields) return undefined; // gone meanwhile
  const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => fields[i] ?? 0);
  return { ppid: fields[1] ?? 0, ms: ((utime ?? 0) + (stime ?? 0) + (cutime ?? 0) + (cstime ?? 0)) * TICK_MS };
}

/** CPU ms of `pid` and its live descendants. */
export function cpuMs(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  const all = new Map<number, { ppid: number; ms: number }>();
  for (const name of readdirSync('/proc')) {
    const p = Number(name);
    if (!Number.isInteger(p)) continue;
    const s = stat(p);
    if (s) all.set(p, s);
  }
  let total = 0;
  const todo = [pid];
  while (todo.length) {
    const p = todo.pop() as number;
    total += all.get(p)?.ms ?? 0;
    for (const [child, s] of all) if (s.ppid === p) todo.push(child);
  }
  return total;
}

/** This process's own CPU time in ms. */
export function selfCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** CPU ms of the children this process has waited for (its git processes, say). */
export function reapedChildrenCpuMs(): number {
  const fields = procStatFields(process.pid)?.map(Number) ?? [];
  return ((fields[13] ?? 0) + (fields[14] ?? 0)) * TICK_MS;
}
