// Types shared by the workflow, the activities and the client, in three files: the public types
// (src/core/types/public.ts, what the package exports), the activity contracts (src/core/types/activity-contracts.ts)
// and the workflow's own contracts: its input, carried state and defaults (src/core/types/workflow.ts).
// Internal code imports them from here; the package's entry point exports only the public ones.
export * from './types/public.js';
export * from './types/activity-contracts.js';
export * from './types/workflow.js';
