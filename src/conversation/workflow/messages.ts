// Signals, queries and updates of the conversation workflow. Imported by the workflow and by
// clients alike (the definitions are plain names), so they hold no logic.
import { FAILURE, failure } from '../../core/failure-types.js';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { RewindAnswer } from '../../time-travel/workflow/rewind-rules.js';
import {
  DEFAULTS,
  type CheckpointEntry,
  type ConfirmationPolicy,
  type ConversationOptions,
  type ChildReport,
  type ConversationEvent,
  type ConversationSetup,
  type ConversationState,
  type ImageRef,
} from '../../core/types.js';

/** What `conversation.pause()` takes. */
export interface PauseRequest {
  /** Also interrupt the command that is running. */
  now?: boolean;
  reason?: string;
}

/** A user message; `images` are references to images the sender put in the object store first. */
export const messageSignal = defineSignal<[text: string, images?: ImageRef[]]>('message');
export const pauseSignal = defineSignal<[request?: PauseRequest]>('pause');
export const resumeSignal = defineSignal('resume');
export const closeSignal = defineSignal('close');
/** From a sub-agent to its parent: its status and the cost of its tree changed. */
export const childStatusSignal = defineSignal<[report: ChildReport]>('childStatus');
/**
 * From `faheem deploy drain`: wake up and, if the deployment's current version is no longer this
 * conversation's, continue as new onto it (keeping its status). Does nothing on an unversioned worker.
 */
export const moveSignal = defineSignal('moveToCurrentVersion');

export const stateQuery = defineQuery<ConversationState>('state');
export const eventsQuery = defineQuery<ConversationEvent[], [fromIndex?: number, limit?: number]>('events');
/** Which run of the workflow recorded which events (from continue-as-new to continue-as-new). */
export const eventRunsQuery = defineQuery<{ runId: string; from: number }[]>('eventRuns');
/** The tools the workspace host offered and the repository's instructions; null before the first run. */
export const setupQuery = defineQuery<ConversationSetup | null>('setup');

/** Add a user message and get its event index back; rejected (nothing recorded) when invalid. */
export const addMessageUpdate = defineUpdate<{ index: number; status: string }, [text: string, images?: ImageRef[]]>('addMessage');
/**
 * The pause signal's effect, answered once applied (a worker must be there): the status after it.
 * `pause({ wait: true })` in the SDK; a caller that must reach a conversation with no worker signals.
 */
export const pauseUpdate = defineUpdate<{ status: string }, [request: PauseRequest]>('pauseApplied');
/** Set the conversation running (the seed's `run()`); answers with the run number to wait on. */
export const runUpdate = defineUpdate<{ runNumber: number; status: string }>('run');

/** What `waitForChange` waits for (either or both). */
export interface WaitRequest {
  /** Answer once the event log is longer than this (the caller has seen this many events). */
  afterEvents?: number;
  /** Answer once the conversation is not running (or a run after `afterRun` has begun). */
  whenStopped?: boolean;
  afterRun?: number;
}

/** What `waitForChange` answers: small, since each answer is kept in history; the client queries the rest. */
export interface WaitAnswer {
  events: number;
  status: string;
  runNumber: number;
}

/**
 * Waits, without polling, until there is something to report (new events, the run stopped, the
 * conversation closing or continuing as new). Kept registered for clients of older versions (and
 * the histories they wrote); clients now wait on the change notices of the conversation's live
 * stream (live/change-waiter.ts), which write nothing to the conversation's history.
 */
export const waitForChangeUpdate = defineUpdate<WaitAnswer, [request: WaitRequest]>('waitForChange');

/** Run the actions waiting for confirmation. */
export const approveUpdate = defineUpdate<{ approved: number }>('approve');
/** Set when actions wait for approval (never, risky, always) from the next reply on; answers with the policy now in force. */
export const setConfirmationPolicyUpdate = defineUpdate<{ confirmationPolicy: ConfirmationPolicy }, [policy: ConfirmationPolicy]>(
  'setConfirmationPolicy',
);
/** Refuse the actions waiting for confirmation; the model sees the reason and goes on. */
export const rejectUpdate = defineUpdate<{ rejected: number }, [reason: string]>('reject');

/** Rewind workspace and conversation to as they were after a step; answers once done (the conversation is then paused). */
export const rewindUpdate = defineUpdate<RewindAnswer, [request: { to: number }]>('rewind');
/** The conversation's checkpoints, one per step (rewound ones included, marked). */
export const checkpointsQuery = defineQuery<CheckpointEntry[]>('checkpoints');
/** What a fork at `step` starts from: the options, the workspace and that step's checkpoint; null without one. */
export const forkPointQuery = defineQuery<ForkPoint | null, [step: number]>('forkPoint');

/** What `forkPoint` answers. */
export interface ForkPoint {
  options: ConversationOptions;
  checkpoint: CheckpointEntry;
}

export const ConversationStatusKey = defineSearchAttributeKey('ConversationStatus', SearchAttributeType.KEYWORD);
export const ConversationModelKey = defineSearchAttributeKey('ConversationModel', SearchAttributeType.KEYWORD);
/** The tenant a conversation belongs to (set by `faheem api` at start; sub-agents carry their parent's). */
export const TenantKey = defineSearchAttributeKey('FaheemTenant', SearchAttributeType.KEYWORD);

export const DESCRIPTIONS = {
  message: 'Add a user message. While running it is folded in before the next model call; otherwise it waits for run.',
  pause:
    'Pause now: no model call or tool run starts after this; the model call in flight is cancelled. {now:true} also interrupts the running command.',
  pauseApplied:
    'Pause, as the pause signal does, and answer with the status once applied (the caller knows it is paused when this returns).',
  resume: 'Resume a paused (or idle, errored, stuck) conversation: the same as conversation.run() or `faheem resume`.',
  close: 'End the conversation workflow cleanly; its history stays readable.',
  moveToCurrentVersion:
    "Wake up; if the Worker Deployment's current version changed, continue as new onto it, keeping the status (sent by `faheem deploy drain`).",
  state: 'Current status, iterations, pending messages, metrics and last error.',
  events: 'The event log from an index (for following), at most `limit` events.',
  addMessage:
    'Add a user message (with optional image references: sha256, mimeType, size) and answer with its event index; rejects empty or oversized messages.',
  run: 'Set the conversation running and answer with the run number (while waiting for confirmation, this approves the pending actions).',
  waitForChange:
    'Kept for clients of older versions: answer (events, status, run) once the event log is longer than afterEvents, or with whenStopped once the run stops; also when the conversation closes or continues as new. Each wait is written to this history; clients now wait on the change notices of the live stream instead.',
  eventRuns:
    'Which run of this conversation recorded which events: events a run no longer holds (condensed, then continued as new) are read from the run that recorded them.',
  childStatus: 'A sub-agent (child conversation) reports its status and cost to its parent.',
  setup: 'The tools the workspace host offered (with their JSON Schemas) and the repository instructions (AGENTS.md) the agent was given.',
  approve: 'Approve the actions waiting for confirmation; they run.',
  setConfirmationPolicy:
    "Set the confirmation policy (never, risky or always) for the model's next replies; actions already waiting stay waiting.",
  reject: 'Reject the actions waiting for confirmation with a reason the model sees; the conversation goes on.',
  rewind:
    'Rewind to step {to}: stops what runs, puts the workspace back as after that step, takes the later steps out of the prompt (still readable), and pauses.',
  checkpoints: 'The checkpoints of the workspace, one per step: step, event index, time, files added / changed / deleted, commit.',
  forkPoint: "What a fork at a step starts from (options and that step's checkpoint).",
} as const;

/**
 * A user message as the workflow accepts it: non-empty text within the size limit; otherwise an
 * InvalidRequest failure with the reason. The SDK and CLI check with this too.
 */
export function checkMessageText(text: unknown): string {
  if (typeof text !== 'string' || text.trim() === '') throw failure(FAILURE.InvalidRequest, 'the message is empty');
  if (text.length > DEFAULTS.maxMessageChars) {
    throw failure(FAILURE.InvalidRequest, `the message is longer than ${DEFAULTS.maxMessageChars} characters (it has ${text.length})`);
  }
  return text;
}
