// The worker's side of change notices: after a workflow task that changed a conversation (new events,
// another status), the workflow calls the `faheemChanges` sink (conversation/workflow/runner/effects.ts; never on
// replay) and the notice is published to the conversation's live stream, where followers wait for it
// (change-waiter.ts). So watching a conversation writes nothing to its history: the stream, not the
// conversation, takes the signal. Published only to conversations somebody follows (their stream
// runs, as the worker's list of streams says: followed.ts), and only on a change of status to one
// whose followers wait for a stop alone (waitUntilStopped); notices that come quickly one after the
// other are coalesced (the latest wins, one publish at a time per conversation), and a conversation
// that becomes followed is sent its latest notice at once. Never slows or fails the workflow task
// that called it.
import type { Client } from '@temporalio/client';
import type { InjectedSinks } from '@temporalio/worker';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import type { ChangeSinks } from '../conversation/workflow/runner/effects.js';
import type { StreamSinks } from './workflow/live-stream.js';
import type { FollowedConversations } from './followed.js';
import { CHANGE_TOPIC, liveStreamId, type ChangeNotice } from './stream-id.js';

/** How long after a conversation's last notice the worker keeps reading who follows it. */
const WATCH_MS = 10_000;

/** One conversation's notices on this worker. */
interface Pending {
  latest: ChangeNotice;
  sent?: ChangeNotice;
  sending: boolean;
  /** The publisher to the conversation's stream (one per conversation, while it changes). */
  stream?: WorkflowStreamClient;
  unwatch: () => void;
  timer: NodeJS.Timeout;
}

/** Publishes change notices for one worker; see the module comment. */
export class ChangeNotifier {
  private readonly conversations = new Map<string, Pending>();
  /** Notices published (tests and benches read it). */
  published = 0;

  constructor(
    private readonly client: Client,
    private readonly followed: FollowedConversations,
  ) {}

  /** The sinks the worker registers (`sinks` of Worker.create): changes, and streams that start. */
  sinks(): InjectedSinks<ChangeSinks & StreamSinks> {
    return {
      faheemChanges: { changed: { fn: (info, notice) => this.notice(info.workflowId, notice), callDuringReplay: false } },
      faheemStreams: {
        started: { fn: (_info, conversationId, wants) => this.followed.started(conversationId, wants), callDuringReplay: false },
      },
    };
  }

  /** A conversation changed: publish the notice if somebody follows it. */
  notice(conversationId: string, notice: ChangeNotice): void {
    let p = this.conversations.get(conversationId);
    if (p) {
      p.latest = notice;
      p.timer.refresh();
    } else {
      p = {
        latest: notice,
        sending: false,
        // While it changes, the worker reads who follows (and sends the latest when that changes).
        unwatch: this.followed.watch(this.client, conversationId, () => void this.send(conversationId)),
        timer: setTimeout(() => this.forget(conversationId), WATCH_MS).unref(),
      };
      this.conversations.set(conversationId, p);
    }
    void this.send(conversationId);
  }

  /** Stops (the worker is shutting down). */
  stop(): void {
    for (const id of [...this.conversations.keys()]) this.forget(id);
  }

  private forget(conversationId: string): void {
    const p = this.conversations.get(conversationId);
    if (!p) return;
    clearTimeout(p.timer);
    p.unwatch();
    dispose(p);
    this.conversations.delete(conversationId);
  }

  private async send(conversationId: string): Promise<void> {
    const p = this.conversations.get(conversationId);
    if (!p || p.sending || p.sent === p.latest) return;
    // Who follows is read at most REFRESH_MS ago while the watch is open; a follower the list does
    // not show yet is sent the latest notice when it does (the watch's callback).
    if (!(await this.followed.check(this.client, conversationId))) return;
    if (p.sending) return;
    p.sending = true;
    try {
      while (p.sent !== p.latest) {
        const notice = p.latest;
        // Followers that wait for a stop alone (waitUntilStopped) are told when the status changes.
        if (p.sent && !this.followed.wantsEvents(conversationId) && sameStatus(p.sent, notice)) break;
        // flush() decides when to send; the client's own timer only backs it up (and is short, so
        // that disposing it does not hold the process).
        p.stream ??= WorkflowStreamClient.create(this.client, liveStreamId(conversationId), {
          batchInterval: '200 milliseconds',
          maxRetryDuration: '2 seconds',
        });
        p.stream.topic<ChangeNotice>(CHANGE_TOPIC).publish(notice);
        await p.stream.flush();
        this.published++;
        p.sent = notice;
      }
    } catch {
      // The stream ended (its followers left) or the server is away: followers fall back to asking.
      this.followed.forget(conversationId);
      dispose(p);
    } finally {
      p.sending = false;
    }
  }
}

/**
 * Whether two notices say the same status of the same run, begun at the same event (only their
 * event counts differ): a status that came back (waiting, running, waiting again) is news.
 */
function sameStatus(a: ChangeNotice, b: ChangeNotice): boolean {
  return a.status === b.status && a.runNumber === b.runNumber && a.closing === b.closing && a.since !== undefined && a.since === b.since;
}

/** Lets go of a conversation's publisher (its flusher would otherwise go on). */
function dispose(p: Pending): void {
  const stream = p.stream;
  p.stream = undefined;
  void stream?.[Symbol.asyncDispose]().catch(() => undefined);
}

/** The sinks of workers with no followers to tell (replayers, tests' workers): they drop each call. */
export const DROP_CHANGES: InjectedSinks<ChangeSinks & StreamSinks> = {
  faheemChanges: { changed: { fn: () => undefined } },
  faheemStreams: { started: { fn: () => undefined } },
};
