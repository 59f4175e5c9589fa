// A process's /proc/PID/stat, read past its command name: the name may hold spaces and
// parentheses (a hostile one may look like fields), and the fields start after its last ") ".
import { readFileSync } from 'node:fs';

/**
 * The fields of /proc/PID/stat from the third on (index 0 the state, 1 the parent's pid, 11 and 12
 * the user and system clock ticks, 19 the start time), or undefined when the process is gone.
 */
export function procStatFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  } catch {
    return undefined;
  }
}
