// Every patch the conversation workflow carries, in one table: what it guards, since when, and when
// it may go. What exists only for old histories lives beside it (legacy/before-open-tools.ts,
// legacy/carried-state.ts) and, on the worker side, in src/conversation/legacy-tools.ts (runTerminal,
// editFile) and call-model.ts's tools-by-name branch (input.setupVersion absent). A patch id may move to `deprecatePatch()` once no open workflow can have a history from
// before it (open conversations complete after their idle timeout, 7 days by default, or continue as
// new — a new run starts with no markers and takes the new path), and may be removed one release
// after that. Nothing else calls `patched()`.
import { patched } from '@temporalio/workflow';

/** One row of the patch table. */
export interface PatchInfo {
  /** What the new code does that histories from before it did not. */
  guards: string;
  /** The release (session) that introduced it. */
  since: string;
  /** When it may go to `deprecatePatch`, and then away. */
  retire: string;
}

/** The table. Ids are the strings recorded in histories: never rename one. */
export const PATCHES = {
  'open-tools': {
    guards:
      'The setup step (prepareTools on the workspace host) and the one runTool activity; without it, terminal and file_editor ran as runTerminal / editFile and tools were offered by name.',
    since: '0.1.0 (open SDK, session 3)',
    retire:
      'deprecatePatch once no conversation started before 0.1.0 is open (idle timeout 7 days after the last run of such a conversation); then remove with legacy/before-open-tools.ts and the runTerminal / editFile activities.',
  },
  'resume-signal-never-approves': {
    guards: 'A resume signal while waiting for confirmation does nothing (only the run update, i.e. conversation.run(), approves).',
    since: '0.1.0 (review fixes, session 3)',
    retire: 'deprecatePatch 7 days after 0.1.0 has been deployed everywhere; remove a release later.',
  },
  'pause-at-start': {
    guards: 'A pause that arrives with the start (signal-with-start, a sub-agent whose parent paused) is applied once the start has run.',
    since: '0.1.0 (review fixes, session 3)',
    retire: 'deprecatePatch 7 days after 0.1.0 has been deployed everywhere; remove a release later.',
  },
  'child-cost-each-step': {
    guards: "A sub-agent reports its tree's cost to its parent after every model call, not only on status changes.",
    since: '0.1.0 (review fixes, session 3)',
    retire: 'deprecatePatch 7 days after 0.1.0 has been deployed everywhere; remove a release later.',
  },
  checkpoints: {
    guards:
      'A checkpoint of the workspace (checkpointWorkspace on the host) before the first step and after every step that ran a host tool.',
    since: '0.2.0 (time travel, session 5)',
    retire: 'deprecatePatch once no conversation started before 0.2.0 is open (7 days after its last run); remove a release later.',
  },
  'checkpoint-with-tool': {
    guards:
      "A step's checkpoint is taken by its last host call (runTool with `checkpoint`), not by a checkpointWorkspace activity of its own (which stays the fallback when that call brings none back).",
    since: '0.3.0 (checkpoints at full throughput, issue 24)',
    retire: 'deprecatePatch once no conversation started before 0.3.0 is open (7 days after its last run); remove a release later.',
  },
  'live-stream-ends-unfollowed': {
    guards:
      "The live stream workflow (`<id>::live`, not the conversation's): a timer a minute long ends the run when no follower polled through it (followers start the stream; workers publish only while it runs).",
    since: '0.3.0 (live streaming at full throughput, issue 24)',
    retire:
      'deprecatePatch 15 minutes after 0.3.0 runs everywhere (a stream from before ends when idle that long); remove a release later.',
  },
  'move-to-new-version': {
    guards:
      "On a versioned worker, when the Worker Deployment's target version is no longer the conversation's, it continues as new onto it (initialVersioningBehavior AUTO_UPGRADE) at the loop's top, carrying its state. Only asked when the target changed, which no earlier history recorded.",
    since: '0.3.0 (deploys, session 8)',
    retire: 'Never needed for old histories (the flag was never true in them); keep while versioned deployments exist.',
  },
  'truncation-ends-run': {
    guards:
      'A text reply cut by the output-token cap ends the run (finished, marked truncated); cut tool calls run once more with the note; a second cut in a row is stuck. Without it, every cut text reply was answered with the note and the run went on.',
    since: '0.3.0 (Responses API, session 6)',
    retire: 'deprecatePatch once no conversation started before 0.3.0 is open (7 days after its last run); remove a release later.',
  },
  'accept-updates-last': {
    guards:
      "An update's acceptance goes after the other commands of the activation it arrived in (src/conversation/workflow/interceptors.ts), so a history where a legacy query ran the workflow ahead of the task that delivered the update replays (issue 23). Asked in a conversation's first activation.",
    since: '0.3.0 (issue 23)',
    retire:
      'deprecatePatch once no conversation started before it is open (7 days after its last run); the reordering itself stays (it is what makes such histories replay).',
  },
  'skip-unsafe-hook-matchers': {
    guards:
      'A PreToolUse/PostToolUse matcher that could backtrack catastrophically (src/hooks/matcher-safety.ts; parseHooks refuses it) is not run and selects no tool, so it cannot stall a workflow task. Asked only for an event whose groups have such a matcher; without it the matcher ran.',
    since: '0.3.0 (issue 40)',
    retire: 'deprecatePatch once no conversation started before it is open (7 days after its last run); remove a release later.',
  },
  'pooled-workspaces': {
    guards:
      'A conversation with options.pool claims a host of its pool and moves to another when that host is lost (pool/workflow/pool-host.ts). Asked only by pooled conversations, which no earlier history has.',
    since: '0.3.0 (issue 43)',
    retire: 'Never needed for replay (no earlier history is pooled); kept so a pooled history marks where the pool path began.',
  },
  'pooled-mcp-stop-on-release': {
    guards:
      "A pooled conversation with MCP servers that ends holding no host (hibernated, or released as it closed) schedules no releaseTools: the host it left stopped its servers when it released the folder (releasePoolHost). Without it, releaseTools went to that host's queue, and waited a minute when the host was gone. Asked only by such conversations.",
    since: '0.3.0 (issue 43)',
    retire: 'deprecatePatch once no pooled conversation started before it is open (7 days after its last run); remove a release later.',
  },
  'hibernate-mid-step': {
    guards:
      'A pooled conversation in a `wait` or awaiting approval longer than its idle bound hibernates there: the workspace is shipped as it is (releasePoolHostMidStep) and the host folder released, then it waits on (pool/workflow/pool-host.ts). Asked only by a pooled conversation that holds a host when such a wait begins; without it, the wait held its host folder.',
    since: '0.3.0 (issue 43, hibernation in waits)',
    retire: 'deprecatePatch once no pooled conversation started before it is open (7 days after its last run); remove a release later.',
  },
  'pooled-hooks-on-host': {
    guards:
      "A pooled conversation's hooks go through the pool's host call (runner/host-call.ts): one that holds no host (hibernated) claims one first, and a lost host moves it. Before, they went to the queue of the host it had last held, with that host's folder as their cwd. Asked only by pooled conversations with hooks due.",
    since: '0.3.0 (issue 43)',
    retire: 'deprecatePatch once no pooled conversation started before it is open (7 days after its last run); remove a release later.',
  },
  'pool-mid-step-kept': {
    guards:
      'A pooled conversation that woke from hibernating in the middle of a step keeps `poolReleasedMidStep` until a host has checkpointed that step (it is dropped when stale, or when the conversation is released again): a host lost before then restores what was shipped in the middle of the step, not the step before it. Before, the claim that woke it dropped it at once.',
    since: '0.3.0 (issue 43, review fixes)',
    retire: 'deprecatePatch once no pooled conversation started before it is open (7 days after its last run); remove a release later.',
  },
  'pool-sub-agent-keeps-host': {
    guards:
      "A sub-agent of a pooled conversation never hibernates (paused, idle or closed): it works in its parent's folder, which only the parent releases. Before, a paused sub-agent released the host under its own id and, resumed, claimed a new, empty workspace of its own.",
    since: '0.3.0 (issue 43, review fixes)',
    retire: 'deprecatePatch once no pooled conversation started before it is open (7 days after its last run); remove a release later.',
  },
  'pool-kept-folder-shown': {
    guards:
      'A pooled conversation whose hibernation in the middle of a step could not ship its workspace (the store failed) records an error event saying so: the host keeps the folder while it waits. Before, nothing showed it. Asked only when such a shipment fails.',
    since: '0.3.0 (issue 43, review fixes)',
    retire: 'deprecatePatch once no pooled conversation started before it is open (7 days after its last run); remove a release later.',
  },
  'stop-processes-on-pause-now': {
    guards:
      "After a `pause --now` (a rewind's included), once the call in flight has come back, the loop asks the workspace host to stop everything the conversation started there (releaseTools: the command its terminal left running past its soft timeout, MCP servers, the kept network). Before, only the call in flight stopped, and a command left running went on. Asked only after such a pause, by a conversation set up on a host it still holds.",
    since: '0.3.0 (nothing outlives its conversation)',
    retire: 'deprecatePatch once no conversation started before it is open (7 days after its last run); remove a release later.',
  },
  'stop-processes-at-end': {
    guards:
      'A conversation without MCP servers that ends (closed, idle, a sub-agent done) on a host it holds schedules releaseTools too, which stops what it left running there (a command past its soft timeout, the kept network). Before, only a conversation with MCP servers did. Asked only by such conversations.',
    since: '0.3.0 (nothing outlives its conversation)',
    retire: 'deprecatePatch once no conversation started before it is open (7 days after its last run); remove a release later.',
  },
  'release-lost-host': {
    guards:
      "A pooled conversation that moves off a lost host schedules, without waiting for it, releasePoolHost with the lost epoch on that host's queue: a host that only lost touch stops what the conversation left running there and gives its folder back once it polls again. Asked only on such a move.",
    since: '0.3.0 (nothing outlives its conversation)',
    retire: 'deprecatePatch once no pooled conversation started before it is open (7 days after its last run); remove a release later.',
  },
  'webhook-deliveries': {
    guards:
      "A conversation with options.webhook schedules a deliverWebhook activity on the webhook worker's queue at each stop (finished, paused, waiting for approval, error, stuck), without waiting for it, and records a `webhook` event when it is over; a run waits for its deliveries before it ends and carries the unfinished ones when it continues as new. Asked only by conversations with a webhook, which no earlier history has.",
    since: '0.4.0 (team API, issue 56)',
    retire: 'Never needed for replay (no earlier history has a webhook); kept so a history marks where deliveries began.',
  },
  'tenant-sub-agents': {
    guards:
      "A sub-agent of a conversation with a tenant (the team API's) starts with the FaheemTenant search attribute and the tenant as its fairness key, as its parent did. Asked only by conversations with a tenant, which no earlier history has.",
    since: '0.3.0 (issue 56, team API)',
    retire: 'Never needed for replay (no earlier history has a tenant); kept so a history marks where sub-agents began to carry it.',
  },
} as const satisfies Record<string, PatchInfo>;

/** A patch id from the table. */
export type PatchId = keyof typeof PATCHES;

/** `patched(id)` for an id of the table (a typo cannot create a new patch). */
export function isPatched(id: PatchId): boolean {
  return patched(id);
}
