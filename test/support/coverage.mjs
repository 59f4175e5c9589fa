// A node:test reporter for `FAHEEM_TEST_COVERAGE=1` runs (run-tests.ts): writes, as one JSON line, the
// lines and branches of src/ that the group's processes ran (Node's own coverage, mapped to the
// TypeScript sources through their source maps), so that run-tests.ts can add up the groups of a run
// and count the files of src/ that no test loaded (Node's report leaves them out).
export default async function* coverage(source) {
  for await (const event of source) {
    if (event.type !== 'test:coverage') continue;
    const files = {};
    for (const f of event.data.summary.files) {
      files[f.path] = {
        lines: f.lines.map((l) => [l.line, l.count > 0 ? 1 : 0]),
        branches: f.branches.map((b) => [b.line, b.count > 0 ? 1 : 0]),
      };
    }
    yield `${JSON.stringify(files)}\n`;
  }
}
