// Bundles the compiled workflow code (dist/conversation/workflow/) once, at build time, into
// dist/workflow-bundle.js. Workers load that file instead of running webpack on every start
// (see src/worker/workflow-source.ts).
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const workflowsPath = fileURLToPath(new URL('../dist/conversation/workflow/index.js', import.meta.url));
const out = fileURLToPath(new URL('../dist/workflow-bundle.js', import.meta.url));

// The same code with the OpenTelemetry workflow interceptors, for workers that export traces
// (src/worker/workflow-source.ts tracedWorkflowSource): untraced workers load none of it.
const traced = fileURLToPath(new URL('../dist/workflow-bundle-traced.js', import.meta.url));
const interceptors = createRequire(import.meta.url).resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');
// Ours, in both: an update is accepted after the other commands of its activation (issue 23), and
// a call's actor is current while its handler runs. Ours go last (innermost): OpenTelemetry's may
// yield before calling on, and the actor must be current when the handler itself runs.
const ours = fileURLToPath(new URL('../dist/conversation/workflow/interceptors.js', import.meta.url));

for (const [file, workflowInterceptorModules] of [
  [traced, [interceptors, ours]],
  [out, [ours]], // last: the plain bundle's time is what the test runner compares (written last)
]) {
  const started = performance.now();
  // WARN: webpack's module listing stays quiet; its errors still print.
  const { code } = await bundleWorkflowCode({ workflowsPath, workflowInterceptorModules, logger: new DefaultLogger('WARN') });
  await writeFile(file, code);
  console.log(`workflow bundle: ${file} (${(code.length / 1024).toFixed(0)} KiB, ${((performance.now() - started) / 1000).toFixed(1)} s)`);
}
