// The files of the workflow bundle, computed from its real import graph (esbuild's metafile from the
// same entry point as scripts/bundle-workflows.mjs; type-only imports are not in it), and the modules
// outside the workflow room that workflow code may use at run time. The room is every `workflow/`
// folder of src/ (each capability keeps its deterministic part in one: src/conversation/workflow/,
// src/time-travel/workflow/, ...). eslint.config.js bans Node in the room and in every file of the
// bundle, and runtime imports from the room to outside it but ALLOWED_OUTSIDE;
// test/unit/repo/workflow-rooms.test.ts holds the bundle to the room and the allowed modules.
import { buildSync } from 'esbuild';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The entry point the worker bundles (src/conversation/workflow/index.ts, compiled to dist/conversation/workflow/index.js). */
export const WORKFLOW_ENTRY = 'src/conversation/workflow/index.ts';

/** Whether a repository path (src/…) is in the workflow room: inside a `workflow/` folder of src/. */
export function inWorkflowRoom(file) {
  return file.startsWith('src/') && file.split('/').slice(1, -1).includes('workflow');
}

/** Outside the workflow room, what workflow code may import at run time: pure modules with no Node in them. */
export const ALLOWED_OUTSIDE = [
  'src/core/types.ts',
  'src/core/types/public.ts',
  'src/core/types/workflow.ts',
  'src/core/types/activity-contracts.ts',
  'src/core/text.ts',
  'src/core/errors.ts',
  'src/core/failure-types.ts',
  'src/tools/define.ts',
  'src/sub-agents/delegate.ts',
  'src/tools/schemas.ts',
  'src/tools/in-workflow.ts',
  'src/tools/risk.ts',
  'src/tools/interrupted.ts',
  'src/hooks/config.ts',
  'src/hooks/matcher-safety.ts',
  'src/skills/prompt.ts',
  'src/live/stream-id.ts',
  'src/client/tenants.ts',
  'src/client/actors.ts',
  'src/client/actor-header.ts',
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
