// The workflow bundle's entry point: everything here runs in Temporal's deterministic sandbox.
export { conversation } from './conversation.js';
export { liveStream } from '../../live/workflow/live-stream.js';
