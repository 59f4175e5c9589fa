// A node:test reporter: the time of each test file's top-level tests and suites, summed, slowest
// first (run-tests.ts prints it after the run). Files that run side by side share the CPU, so these
// are longer than a file's time alone.
export default async function* fileTimes(source) {
  const perFile = new Map();
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      perFile.set(event.data.file, (perFile.get(event.data.file) ?? 0) + (event.data.details?.duration_ms ?? 0));
    }
  }
  const rows = [...perFile].sort((a, b) => b[1] - a[1]);
  yield `== time per test file (its tests, summed):\n${rows.map(([f, ms]) => `${(ms / 1000).toFixed(1).padStart(7)} s  ${f.replace(process.cwd() + '/', '')}`).join('\n')}\n`;
}
