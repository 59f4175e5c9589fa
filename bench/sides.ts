// Sides of a comparison run one after the other on one server, so nothing of one side may run
// during the next: its worker would replay it (the next side pays). A finished conversation's live
// stream ends a minute after its last follower, and a pooled one hibernates after its idle bound.
// Terminating the conversations and their streams asks no worker.
import type { Client } from '@temporalio/client';
import { liveStreamId } from '../src/live/stream-id.js';

/** Terminates these conversations and their live streams (those already gone are skipped). */
export async function endSide(client: Client, conversationIds: readonly string[]): Promise<void> {
  const ids = conversationIds.flatMap((id) => [id, liveStreamId(id)]);
  await Promise.all(
    ids.map((id) =>
      client.workflow
        .getHandle(id)
        .terminate('bench side done')
        .catch(() => undefined),
    ),
  );
}
