// The conversation's setup (tool specs, AGENTS.md) as the model-call worker needs it: read once per
// conversation and setup version with the `setup` query, then kept in memory. Not a store: a miss
// (a new worker, an evicted entry) just asks the workflow again.
import type { WorkflowHandle } from '@temporalio/client';
import type { ConversationSetup } from '../core/types.js';
import { setupQuery } from './workflow/messages.js';
import { unstick } from './read-events.js';

export class SetupCache {
  private readonly cache = new Map<string, Promise<ConversationSetup>>();
  constructor(private readonly maxEntries = 1000) {}

  /**
   * `runId` is the asking run's: an id used again by a new conversation never gets the old one's setup.
   * `attempt` > 1 with nothing cached: likely a retry after its worker died (see readAfterRetry).
   */
  read(handle: WorkflowHandle, version: number, runId: string, attempt = 1): Promise<ConversationSetup> {
    const key = `${handle.workflowId}\u0000${runId}\u0000${version}`;
    let entry = this.cache.get(key);
    if (entry) {
      this.cache.delete(key); // most recently used goes last
    } else {
      entry = (attempt > 1 ? unstick(handle) : Promise.resolve())
        .then(() => handle.query(setupQuery))
        .then((setup) => {
          if (!setup || setup.version < version) throw new Error(`conversation ${handle.workflowId} has no setup version ${version}`);
          return setup;
        });
      entry.catch(() => this.cache.delete(key));
    }
    this.cache.set(key, entry);
    while (this.cache.size > this.maxEntries) this.cache.delete(this.cache.keys().next().value as string);
    return entry;
  }
}
