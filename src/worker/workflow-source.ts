// Where a worker gets its workflow code: a prebuilt bundle when there is one, webpack otherwise.
import type { WorkerOptions } from '@temporalio/worker';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { DeploySettings } from '../settings/deploy.js';

/** True when this module runs from the TypeScript sources (tsx), false from the compiled dist/. */
const FROM_SOURCES = import.meta.url.endsWith('.ts');

/**
 * The workflow code's entry point beside this module: `src/conversation/workflow/index.ts` when running from
 * the TypeScript sources, `dist/conversation/workflow/index.js` from the compiled package.
 */
export function workflowsPath(): string {
  return fileURLToPath(new URL(FROM_SOURCES ? '../conversation/workflow/index.ts' : '../conversation/workflow/index.js', import.meta.url));
}

/**
 * Webpack options for bundling {@link workflowsPath}: NodeNext sources import `./x.js`, which
 * webpack must map onto `./x.ts` when bundling the TypeScript sources (harmless for dist/).
 */
export const bundlerOptions: WorkerOptions['bundlerOptions'] = {
  webpackConfigHook: (config) => {
    config.resolve = { ...config.resolve, extensionAlias: { '.js': ['.ts', '.js'] } };
    return config;
  },
};

/**
 * The bundle `npm run build` writes (`dist/workflow-bundle.js`, beside the compiled folder of
 * this module), or `undefined` when there is none (running from the TypeScript sources, or a
 * `dist/` compiled without the bundling step).
 */
export function prebuiltWorkflowBundle(): string | undefined {
  if (FROM_SOURCES) return undefined;
  const file = fileURLToPath(new URL('../workflow-bundle.js', import.meta.url));
  return existsSync(file) ? file : undefined;
}

/**
 * The workflow interceptors every bundle carries (`conversation/workflow/interceptors`, beside
 * {@link workflowsPath}): an update is accepted after the other commands of its activation.
 */
export function workflowInterceptorsPath(): string {
  return fileURLToPath(
    new URL(FROM_SOURCES ? '../conversation/workflow/interceptors.ts' : '../conversation/workflow/interceptors.js', import.meta.url),
  );
}

/** The workflow code options of `Worker.create`: a ready bundle, or the sources to bundle now. */
export type WorkflowSource =
  | { workflowBundle: { codePath: string } }
  | { workflowsPath: string; bundlerOptions: WorkerOptions['bundlerOptions']; interceptors: WorkerOptions['interceptors'] };

/**
 * Chooses the workflow code a worker runs, to spread into `Worker.create`:
 *
 * 1. `FAHEEM_WORKFLOW_BUNDLE` (a file made by `bundleWorkflowCode`), if set;
 * 2. else the prebuilt `dist/workflow-bundle.js` of the installed package (starts in well under a
 *    second);
 * 3. else, running from the TypeScript sources (e.g. `npm run demo` with tsx), the workflow
 *    sources, which the worker bundles with webpack as it starts (several seconds).
 *
 * @param settings - The deployment settings: their `workflowBundle` (FAHEEM_WORKFLOW_BUNDLE).
 */
export function workflowSource(settings: Pick<DeploySettings, 'workflowBundle'>): WorkflowSource {
  const fromEnv = settings.workflowBundle;
  if (fromEnv) return { workflowBundle: { codePath: fromEnv } };
  const prebuilt = prebuiltWorkflowBundle();
  if (prebuilt) return { workflowBundle: { codePath: prebuilt } };
  return { workflowsPath: workflowsPath(), bundlerOptions, interceptors: { workflowModules: [workflowInterceptorsPath()] } };
}

/**
 * The workflow code of a traced worker: the same code with the OpenTelemetry workflow interceptors
 * (`dist/workflow-bundle-traced.js`, beside the plain bundle, or FAHEEM_WORKFLOW_BUNDLE's
 * `-traced` sibling), or the sources bundled now with them.
 */
export function tracedWorkflowSource(settings: Pick<DeploySettings, 'workflowBundle'>): WorkerWorkflowCode {
  const plain = workflowSource(settings);
  if ('workflowBundle' in plain) {
    const traced = plain.workflowBundle.codePath.replace(/\.js$/, '-traced.js');
    if (existsSync(traced)) return { workflowBundle: { codePath: traced } };
  }
  return {
    workflowsPath: workflowsPath(),
    bundlerOptions,
    // Ours innermost, as in scripts/bundle-workflows.mjs: a call's actor is current when its handler runs.
    interceptors: { workflowModules: [TRACED_WORKFLOW_INTERCEPTORS, workflowInterceptorsPath()] },
  };
}

/** `Worker.create`'s workflow code options, with workflow interceptors when bundling now. */
export type WorkerWorkflowCode = WorkflowSource;

/** The module of the OpenTelemetry workflow interceptors (resolved for webpack). */
const TRACED_WORKFLOW_INTERCEPTORS = createRequire(import.meta.url).resolve(
  '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors',
);
