// Bundles the web console's page (console-page/: Preact + JSX) into dist/console/ (app.js, app.css,
// index.html, favicon.svg) at build time; the package ships these files, nothing is fetched at run time.
import { build } from 'esbuild';
import { copyFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const src = fileURLToPath(new URL('../console-page/', import.meta.url));
const out = fileURLToPath(new URL('../dist/console/', import.meta.url));
const started = performance.now();
await mkdir(out, { recursive: true });
const result = await build({
  entryPoints: [`${src}main.tsx`],
  outfile: `${out}app.js`,
  bundle: true,
  format: 'esm',
  target: ['es2022'],
  platform: 'browser',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
});
await copyFile(`${src}app.css`, `${out}app.css`);
await copyFile(`${src}index.html`, `${out}index.html`);
await copyFile(`${src}favicon.svg`, `${out}favicon.svg`);
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
console.log(`console page: ${out} (${(bytes / 1024).toFixed(0)} KiB of script, ${((performance.now() - started) / 1000).toFixed(1)} s)`);
