#!/usr/bin/env node
// The `faheem` command: runs the compiled CLI in dist/ (`npm run build`; `npm install` of a clone
// builds it through `prepare`). Plain JavaScript, so it needs no TypeScript loader.
import { existsSync, readFileSync } from 'node:fs';

// The version at once, without loading the CLI (the full CLI answers the same).
if (process.argv.length === 3 && ['--version', '-V'].includes(process.argv[2])) {
  console.log(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version);
  process.exit();
}

const cli = new URL('../dist/cli/index.js', import.meta.url);
if (!existsSync(cli)) {
  console.error('faheem: dist/ is missing (the compiled CLI); run `npm run build` first.');
  process.exit(1);
}
// The module compile cache first (Node 22.1+, under ~/.faheem): it covers only what is imported after it.
try {
  const { compileCacheSettings, enableCompileCache } = await import(new URL('../dist/worker/compile-cache.js', import.meta.url).href);
  enableCompileCache(compileCacheSettings(process.env));
} catch {
  // a start without the cache is only slower
}
// `status`, `pause` and `send` over Temporal's HTTP API when they can (dist/cli/quick.js says
// when): the same answer without loading the SDK. Otherwise, or on any doubt before acting, the
// full command runs; a quick command that acted and could not finish says so instead.
let quick;
if (['status', 'pause', 'send'].includes(process.argv[2] ?? '')) {
  try {
    quick = await import(new URL('../dist/cli/quick.js', import.meta.url).href);
  } catch {
    // the full command below
  }
}
if (quick) {
  try {
    if (await quick.runQuick(process.argv.slice(2), process.env)) process.exit();
  } catch (err) {
    if (!(err instanceof quick.QuickFailure)) throw err;
    console.error(`faheem: ${err.message}`);
    process.exit(1);
  }
}
await import(cli.href);
