// Ships @temporalio/workflow-streams inside dist/ (dist/vendor/workflow-streams/) and points the
// compiled code at that copy. The package pins @temporalio/* to 1.23.0 exactly; our npm `overrides`
// put it on our 1.24 here, but overrides do not apply where faheemcode is installed as a
// dependency, where npm would add a second Temporal SDK beside ours (two @temporalio/proto copies
// fail at load). Its compiled files (MIT, license kept beside them) require @temporalio/* by name,
// so this copy runs on faheemcode's own 1.24 dependencies.
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const from = path.join(root, 'node_modules', '@temporalio', 'workflow-streams');
const dist = path.join(root, 'dist');
const to = path.join(dist, 'vendor', 'workflow-streams');

await mkdir(to, { recursive: true });
const version = JSON.parse(await readFile(path.join(from, 'package.json'), 'utf8')).version;
for (const f of await readdir(path.join(from, 'lib'))) if (f.endsWith('.js')) await copyFile(path.join(from, 'lib', f), path.join(to, f));
await copyFile(path.join(from, 'LICENSE'), path.join(to, 'LICENSE'));
// CommonJS inside our ESM package.
await writeFile(
  path.join(to, 'package.json'),
  `${JSON.stringify({ type: 'commonjs', name: '@temporalio/workflow-streams', version }, null, 2)}\n`,
);

let rewritten = 0;
for (const rel of await readdir(dist, { recursive: true })) {
  if (!rel.endsWith('.js') || rel.startsWith('vendor')) continue;
  const file = path.join(dist, rel);
  const text = await readFile(file, 'utf8');
  if (!text.includes('@temporalio/workflow-streams/')) continue;
  let target = path.relative(path.dirname(file), to).split(path.sep).join('/');
  if (!target.startsWith('.')) target = `./${target}`;
  const out = text.replace(/(["'])@temporalio\/workflow-streams\/(client|workflow)\1/g, (_, q, entry) => `${q}${target}/${entry}.js${q}`);
  await writeFile(file, out);
  rewritten++;
}
console.log(`workflow-streams ${version}: vendored into dist/vendor (${rewritten} files point at it)`);
