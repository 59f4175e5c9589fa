// Whether dist/ is newer than everything it is made from (by file times). The console page is written
// last by the build, so a build that failed half-way leaves it missing and counts as stale.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** What dist/ is made from: a change to any of these since the last build means building again. */
export const BUILD_INPUTS = ['src', 'console-page', 'scripts', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];

/** The files whose presence says a build finished: the CLI, the workflow bundle, and the console page (written last). */
const BUILD_OUTPUTS = ['dist/cli/index.js', 'dist/workflow-bundle.js', 'dist/console/index.html'];

function newestMtime(p) {
  const s = statSync(p);
  if (!s.isDirectory()) return s.mtimeMs;
  let newest = s.mtimeMs;
  for (const e of readdirSync(p, { withFileTypes: true, recursive: true })) {
    newest = Math.max(newest, statSync(path.join(e.parentPath ?? e.path, e.name)).mtimeMs);
  }
  return newest;
}

/** True when every build output exists and the oldest of them is newer than the newest input. */
export function distIsFresh(root = ROOT) {
  const outputs = BUILD_OUTPUTS.map((p) => path.join(root, p));
  if (!outputs.every(existsSync)) return false;
  const built = Math.min(...outputs.map((p) => statSync(p).mtimeMs));
  const inputs = Math.max(
    ...BUILD_INPUTS.map((p) => path.join(root, p))
      .filter(existsSync)
      .map(newestMtime),
  );
  return built > inputs;
}
