// The workflow that hosts one conversation's live stream (`<id>::live`): the reply as it streams, a
// command's output as it comes. It lives beside the conversation so that the conversation's own
// history takes no event per delta batch. Publishing is a batched signal from the worker's
// activities, following a long-poll update from an offset (@temporalio/workflow-streams).
//
// Bounded: a model call's step marker drops the lines before it (their steps' events have landed;
// a follower that comes late is shown the step under way), the log keeps at most MAX_ITEMS lines
// (older ones are truncated: a follower that far behind starts from the oldest kept), and the run continues-as-new when its history grows long. With
// no publishing for IDLE the run ends; the next publish starts a new run whose offsets begin above
// every offset of the last run (its start time in ms × 1000), so a follower's stale offset is never
// mistaken for a new line. It also carries change notices (the worker's word that the conversation
// has news, for followers that wait on it): a cut never drops the latest one.
import {
  allHandlersFinished,
  condition,
  defineSignal,
  proxySinks,
  setHandler,
  setWorkflowOptions,
  sleep,
  upsertMemo,
  workflowInfo,
  type Sinks,
} from '@temporalio/workflow';
import { WorkflowStream, type WorkflowStreamState } from '@temporalio/workflow-streams/workflow';
import { CHANGE_TOPIC, STEP_TOPIC, WANT_SIGNAL, WANTS_MEMO, wantsOf, type FollowerWants, type LiveStreamInput } from '../stream-id.js';
import { isPatched } from '../../conversation/workflow/legacy/patches.js';

/** Lines kept; past this the oldest half goes. */
export const MAX_ITEMS = 2_000;
/** Bytes of lines kept (what continue-as-new carries: well under Temporal's 2 MB payload limit). */
const MAX_BYTES = 512 * 1024;
/** History events before a new run (well under Temporal's 50k limit, and a quick replay). */
export const MAX_HISTORY = 8_000;
/** No publish for this long ends the run. */
export const IDLE = '15 minutes';
/** No follower polling through a whole period of this long ends the run (followers start it again). */
const UNFOLLOWED = '1 minute';

/**
 * The worker's side of a stream's start (src/live/followed.ts: `started`), with what its followers
 * want (an older workflow's call leaves it out: everything).
 */
export interface StreamSinks extends Sinks {
  faheemStreams: { started(conversationId: string, wants?: FollowerWants): void };
}

const streamSinks = proxySinks<StreamSinks>().faheemStreams;
const wantSignal = defineSignal<[Partial<FollowerWants>]>(WANT_SIGNAL);

/** The live stream of one conversation; see the module comment. */
export async function liveStream(input: LiveStreamInput): Promise<void> {
  // Tell the worker at once that the conversation is followed (no command: a sink, never on
  // replay), so that it publishes without waiting for its list of streams to show this one.
  // Workers publish only what a follower wants (the memo says so to the ones that list streams): a
  // script waiting for a stop costs no live line and no notice per event.
  let wants: FollowerWants = input.wants ?? { lines: true, events: true };
  if (!workflowInfo().unsafe.isReplaying) streamSinks.started(input.conversationId, wants);
  const saidWants = () => ({ [WANTS_MEMO.lines]: wants.lines, [WANTS_MEMO.events]: wants.events });
  const memoWants = wantsOf(workflowInfo().memo);
  if (input.wants && (memoWants.lines !== wants.lines || memoWants.events !== wants.events)) upsertMemo(saidWants());
  setHandler(wantSignal, (more) => {
    const next = { lines: wants.lines || more?.lines === true, events: wants.events || more?.events === true };
    if (next.lines === wants.lines && next.events === wants.events) return;
    wants = next;
    upsertMemo(saidWants());
    streamSinks.started(input.conversationId, wants);
  });
  const prior = input.streamState as WorkflowStreamState | undefined;
  const initial = prior ?? { log: [], base_offset: Date.now() * 1000, publisher_sequences: {}, publisher_last_seen: {} };
  const stream = new WorkflowStream(initial);
  const end = () => logEnd(stream);
  const maxItems = input.limits?.maxItems ?? MAX_ITEMS;
  const maxHistory = input.limits?.maxHistory ?? MAX_HISTORY;
  const long = () => workflowInfo().historyLength > maxHistory || workflowInfo().continueAsNewSuggested;
  // Lines from here on are looked at for a step marker: the whole log, not its end now, since the
  // publishes that arrived with the start (one activation on a busy worker) are in it already.
  let seen = initial.base_offset;
  // One timer per idle period (not one per publish, which would add two events to each batch).
  let idle = false;
  void (async () => {
    for (;;) {
      const before = end().next;
      await sleep(IDLE);
      if (end().next === before) {
        idle = true;
        return;
      }
    }
  })();
  // Started by a follower (live/subscribe.ts) and published to only while it runs: once no poll
  // was seen for a whole period, nobody follows, and the run ends (the workers then stop publishing).
  let polled = false;
  const polling = () => {
    if (!allHandlersFinished()) polled = true;
    return polled;
  };
  if (isPatched('live-stream-ends-unfollowed')) {
    void (async () => {
      for (;;) {
        polled = !allHandlersFinished();
        await sleep(UNFOLLOWED);
        if (!polling()) {
          idle = true;
          return;
        }
      }
    })();
  }
  for (;;) {
    await condition(() => (polling(), end().next !== seen || long() || idle));
    const e = end();
    // The latest change notice stays readable whatever is cut below: a follower parked before it
    // would otherwise never see it (the cut sends it back to the oldest line kept).
    const notice = lastChangeNotice(stream);
    // A new step began: the lines before it are of steps whose events have landed.
    const step = lastStepMarker(stream, seen, e.next);
    if (step !== undefined) stream.truncate(step);
    const kept = end();
    if (kept.length > maxItems) stream.truncate(kept.next - Math.floor(maxItems / 2));
    // A flood within one step (a noisy command) is bounded by bytes too: the newest lines stay.
    const cut = bytesCut(stream, input.limits?.maxBytes ?? MAX_BYTES);
    if (cut !== undefined) stream.truncate(cut);
    if (notice && notice.offset < end().next - end().length) keepNotice(stream, notice.line);
    seen = end().next;
    if (long()) {
      await stream.continueAsNew<typeof liveStream>((state) => [{ ...input, ...(input.wants ? { wants } : {}), streamState: state }]);
    }
    if (idle) {
      // Let waiting followers go, then end (the next publish starts a new run).
      stream.detachPollers();
      await condition(allHandlersFinished);
      return;
    }
  }
}

/** One line of the stream's log, as the package keeps it. */
interface OwnLine {
  topic?: string;
  payload?: { data?: Uint8Array | null };
}

/**
 * The stream's own log and base offset (what its offset query answers), or undefined if the
 * package keeps them otherwise. Read directly because getState() re-encodes every line, too dear
 * on each activation; the package is pinned to one version, and each reader below has a fallback
 * that stays correct if the layout changes.
 */
function ownLog(stream: WorkflowStream): { log: OwnLine[]; base: number } | undefined {
  const own = stream as unknown as { log?: unknown; baseOffset?: unknown };
  return Array.isArray(own.log) && typeof own.baseOffset === 'number' ? { log: own.log as OwnLine[], base: own.baseOffset } : undefined;
}

/** The log's length and next offset. */
function logEnd(stream: WorkflowStream): { length: number; next: number } {
  const own = ownLog(stream);
  if (own) return { length: own.log.length, next: own.base + own.log.length };
  const s = stream.getState();
  return { length: s.log.length, next: s.base_offset + s.log.length };
}

/** The last change notice in the log (its line and offset), if any. */
function lastChangeNotice(stream: WorkflowStream): { line: OwnLine; offset: number } | undefined {
  const own = ownLog(stream);
  if (!own) return undefined;
  for (let i = own.log.length - 1; i >= 0; i--) {
    const line = own.log[i];
    if (line?.topic === CHANGE_TOPIC) return { line, offset: own.base + i };
  }
  return undefined;
}

/** Appends a change notice that a cut dropped again, as it was (its payload is not decoded here). */
function keepNotice(stream: WorkflowStream, line: OwnLine): void {
  ownLog(stream)?.log.push(line);
}

/** The offset of the last step marker among the lines [from, to), if any. */
function lastStepMarker(stream: WorkflowStream, from: number, to: number): number | undefined {
  const own = ownLog(stream);
  if (!own) return undefined;
  for (let offset = to - 1; offset >= Math.max(from, own.base); offset--) {
    if (own.log[offset - own.base]?.topic === STEP_TOPIC) return offset;
  }
  return undefined;
}

/** The offset to truncate to so that the lines kept hold at most `max` bytes (undefined: within it). */
function bytesCut(stream: WorkflowStream, max: number): number | undefined {
  const own = ownLog(stream);
  if (!own) return undefined;
  let bytes = 0;
  for (let i = own.log.length - 1; i >= 0; i--) {
    bytes += (own.log[i]?.payload?.data?.length ?? 0) + 64;
    if (bytes > max) return own.base + i + 1;
  }
  return undefined;
}

// On versioned workers a stream follows the Worker Deployment's current version at its next task
// (a deploy moves it with its conversation), instead of staying pinned to the version it started
// on, whose workers a drain stops: its followers would wait on a stream nobody runs. Only there: a
// worker without a deployment version that declares a behaviour has its tasks refused.
setWorkflowOptions(
  () => (workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior: 'AUTO_UPGRADE' } : {}),
  liveStream,
);
