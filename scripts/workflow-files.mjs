// The files of the workflow bundle, computed from its real import graph (esbuild's metafile from the
// same entry point as scripts/bundle-workflows.mjs; type-only imports are not in it), and the modules
// outside src/workflows that workflow code may use at run time. eslint.config.js bans Node in exactly
// these files; test/unit/repo/workflow-rooms.test.ts holds the bundle to the allowed modules.
import { buildSync } from 'esbuild';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The entry point the worker bundles (src/workflows/index.ts, compiled to dist/workflows/index.js). */
export const WORKFLOW_ENTRY = 'src/workflows/index.ts';

/** Outside src/workflows, what workflow code may import at run time: pure modules with no Node in them. */
export const ALLOWED_OUTSIDE = [
  'src/types.ts',
  'src/types/public.ts',
  'src/types/workflow.ts',
  'src/types/activity-contracts.ts',
  'src/text.ts',
  'src/errors.ts',
  'src/failure-types.ts',
  'src/tools/define.ts',
  'src/tools/delegate.ts',
  'src/tools/schemas.ts',
  'src/tools/in-workflow.ts',
  'src/tools/risk.ts',
  'src/tools/interrupted.ts',
  'src/hooks/config.ts',
  'src/hooks/matcher-safety.ts',
  'src/skills/prompt.ts',
  'src/live/stream-id.ts',
  'src/tenants.ts',
  'src/actors.ts',
  'src/actor-header.ts',
];

/** Packages the bundle may import (everything else is Node or I/O). */
export const ALLOWED_PACKAGES = ['@temporalio/workflow', '@temporalio/common', '@temporalio/workflow-streams/workflow', 'zod'];

/** The bundle's source files (relative to the repository) and, per file, the packages it imports. */
export function workflowBundle() {
  const { metafile } = buildSync({
    absWorkingDir: ROOT,
    entryPoints: [WORKFLOW_ENTRY],
    bundle: true,
    write: false,
    metafile: true,
    platform: 'neutral',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
  });
  const files = Object.keys(metafile.inputs).sort();
  const packages = Object.fromEntries(
    Object.entries(metafile.inputs).map(([file, input]) => [file, input.imports.filter((i) => i.external).map((i) => i.path)]),
  );
  return { files, packages };
}
