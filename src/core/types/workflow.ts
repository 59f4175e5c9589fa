// The workflow's own contracts: its input (with the state a run carries into the next when it
// continues as new), what a sub-agent reports to its parent, and the defaults. Internal.
import type {
  CheckpointEntry,
  ChildSummary,
  CondenserOptions,
  ConfirmationPolicy,
  ConversationEvent,
  ConversationOptions,
  ConversationSetup,
  ConversationStatus,
  ForkOrigin,
  ImageRef,
  Metrics,
  TerminalState,
} from './public.js';
import type { WebhookDeliveryInput } from './activity-contracts.js';

/** What a sub-agent tells its parent when its status changes. */
export interface ChildReport {
  id: string;
  status: ConversationStatus;
  cost: number;
}

/** Input of the conversation workflow. `carried` is set when the workflow continues as new. */
export interface ConversationInput {
  options: ConversationOptions;
  firstMessage?: string;
  /** The first message's images (references: the client stored the bytes). */
  firstImages?: ImageRef[];
  /** Start running at once (the CLI's `start`); otherwise the conversation waits in `idle`. */
  run?: boolean;
  carried?: CarriedState;
  /** A fork: make the workspace from the source's checkpoint before anything runs (see `forkConversation`). */
  fork?: { origin: ForkOrigin; sourceWorkspace: string };
  /** Webhook deliveries the previous run had not finished when it continued as new: this run sends them again. */
  webhookBacklog?: WebhookDeliveryInput[];
}

/** What a run hands the next when it continues as new (migrated in conversation/workflow/legacy/carried-state.ts). */
export interface CarriedState {
  /** The shape's version (absent: version 1). */
  version?: number;
  events: ConversationEvent[];
  status: ConversationStatus;
  iterations: number;
  runNumber: number;
  metrics: Metrics;
  lastError: string | null;
  /** Version 1 only: the terminal's state (now in toolState.terminal). */
  terminal?: TerminalState;
  modelSeenEvents: number;
  /** Version 1 only: task_tracker's list (now in toolState.task_tracker). */
  tasks?: { title: string; notes?: string; status: 'todo' | 'in_progress' | 'done' }[];
  runCost?: number;
  /** Each tool's durable state, by tool name. */
  toolState?: Record<string, unknown>;
  setup?: ConversationSetup;
  lastPromptTokens?: number;
  condenseRetryAt?: number;
  children?: ChildSummary[];
  childCount?: number;
  finalMessage?: string | null;
  /** With an output schema: the last answer's checked JSON value. */
  output?: unknown;
  /** The runs so far and the first event index each recorded (the events they hold are not carried). */
  runs?: { runId: string; from: number }[];
  /** Steps so far (over the whole conversation), and their checkpoints. */
  steps?: number;
  checkpoints?: CheckpointEntry[];
  forkedFrom?: ForkOrigin;
  /** A fork's workspace has been made (so a continued run does not make it again). */
  forkMade?: boolean;
  /** Hooks' bookkeeping: the run SessionStart ran for, the run a Stop hook blocked in, user messages checked up to. */
  hooks?: { sessionStartedRun: number; stopHookRun: number; checkedPromptsUpTo: number };
  /** A step the conversation was in the middle of when it moved to a new worker version (see runner/versioning.ts). */
  movedStep?: MovedStep;
  /** The confirmation policy in force (absent: older runs changed it in the options, which read it then). */
  confirmationPolicy?: ConfirmationPolicy;
}

/**
 * The part of a step that moves with a conversation onto a new worker version: a `wait` in progress
 * (its deadline kept; calls of the same reply after it are told they did not run), or actions
 * waiting for approval (still pending on the new version).
 */
export type MovedStep =
  | { kind: 'wait'; toolCallId: string; until: string; reason: string; capped: boolean; rest: string[] }
  | { kind: 'approval'; toolCallIds: string[] };

export const DEFAULTS = {
  taskQueue: 'faheem',
  maxIterations: 500,
  idleTimeoutMs: 7 * 24 * 60 * 60 * 1000,
  continueAsNewEverySteps: 100,
  condenser: { maxEvents: 240, maxPromptTokens: 120_000, keepFirst: 2 } as CondenserOptions,
  maxMessageChars: 100_000,
  /** The `events` query answers in pages of about this many characters (well under payload limits). */
  eventsPageChars: 200_000,
  /** A call on the workspace host not picked up for this long: the conversation says it is waiting for the host. */
  hostWaitMs: 30_000,
  /** A pooled conversation idle (not paused) this long hibernates: its host folder is released (paused: at once). */
  poolIdleReleaseMs: 10 * 60 * 1000,
  /** AGENTS.md beyond this many characters is cut (it goes into every prompt). */
  maxInstructionsChars: 20_000,
  /** The longest one `wait` call may sleep. */
  maxWaitMs: 7 * 24 * 60 * 60 * 1000,
} as const;
