// Loaded into every test file's process by run-tests.ts (`--import`): at exit, appends the CPU the
// file used, its own and that of the processes it started and waited for (workers, CLIs, model
// servers: /proc/self/stat's utime, stime, cutime and cstime), to $FAHEEM_TEST_CPU_FILE. So the run
// can say where its CPU went, which wall times of files run side by side cannot.
import { appendFileSync, readFileSync } from 'node:fs';

const out = process.env.FAHEEM_TEST_CPU_FILE;
const file = process.argv.find((a) => /\.test\.[cm]?[jt]s$/.test(a));
if (out && file) {
  process.on('exit', () => {
    try {
      // The fields after the command's closing parenthesis: utime is the 12th, then stime, cutime, cstime.
      const stat = readFileSync('/proc/self/stat', 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0);
      appendFileSync(out, `${JSON.stringify({ file, cpuS: ticks / 100 })}\n`);
    } catch {
      // no /proc (not Linux): no figure
    }
  });
}
