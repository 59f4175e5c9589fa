// Bundles the compiled workflow code (dist/workflows/) once, at build time, into
// dist/workflow-bundle.js. Workers load that file instead of running webpack on every start
// (see src/workflow-source.ts).
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const workflowsPath = fileURLToPath(new URL('../dist/workflows/index.js', import.meta.url));
const out = fileURLToPath(new URL('../dist/workflow-bundle.js', import.meta.url));

const started = performance.now();
// WARN: webpack's module listing stays quiet; its errors still print.
const { code } = await bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger('WARN') });
await writeFile(out, code);
console.log(`workflow bundle: ${out} (${(code.length / 1024).toFixed(0)} KiB, ${((performance.now() - started) / 1000).toFixed(1)} s)`);
