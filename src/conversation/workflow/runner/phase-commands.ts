// Which commands (./commands.ts) each phase of the loop may apply. A phase's view of the run
// (`SetupRun`, `TurnRun`, ...) narrows what it reads; its `apply` (`Applies<phase>`) narrows what it
// writes to the commands of its set below, and the compiler holds it: a phase applies a command
// only as taken from a set (each is branded with its name, so two commands of the same shape stay
// apart), and its view accepts only its own set's. The workflow's glue and the handlers apply any
// command through `ConversationRun.apply`. The sets hold the same functions as ./commands.ts: no
// behaviour changes, only what may be written where (issue #60; the table in docs/architecture.md).
import * as commands from './commands.js';
import type { Command, CommandResult, Facts, RunSnapshot } from './commands.js';

type Commands = typeof commands;

/** The names of the commands in ./commands.ts (not the helpers beside them, such as `halted`). */
export type CommandName = {
  [K in keyof Commands]: Commands[K] extends (m: RunSnapshot, facts: Facts, ...args: never[]) => CommandResult<unknown> ? K : never;
}[keyof Commands];

declare const commandName: unique symbol;

/** A command known by its name: no runtime part, it only keeps commands of the same shape apart. */
export type Named<K extends CommandName> = Commands[K] & { readonly [commandName]: K };

/** The commands of one phase, by name. */
type CommandSet<K extends CommandName> = { readonly [N in K]: Named<N> };

function allow<const K extends CommandName>(...names: K[]): CommandSet<K> {
  return Object.fromEntries(names.map((name) => [name, commands[name]])) as CommandSet<K>;
}

/** Each phase (its view of the run) and the commands it may apply: what it applies today, no more. */
export const PHASE_COMMANDS = {
  /** `SetupRun` (runner/setup.ts): the host's setup and what it said; the stop of processes after a pause --now. */
  setup: allow('setSetup', 'record', 'processesStopAsked'),
  /** `ModelCallRun` (runner/model-call.ts): what went with the call and what the model saw. */
  modelCall: allow('eventsSent', 'modelSaw'),
  /** `CondenserRun` (runner/condenser.ts): a summary, or why there is none. */
  condenser: allow('recordCondensation', 'condensationFailed'),
  /** `ToolCallRun` (runner/tool-dispatch.ts): a tool's durable state. */
  toolCall: allow('setToolState'),
  /** `HostCallRun` (runner/host-call.ts): waiting for the workspace host, and its end. */
  hostCall: allow('recordAndShow'),
  /** `WaitRun` (runner/durable-wait.ts): a `wait` call, and the step it carries to the next run. */
  wait: allow('beginWait', 'endWait', 'carryStep'),
  /** `TurnRun` (runner/turn.ts): a turn's bookkeeping, its reply, and the hook points around the model call. */
  turn: allow('markSessionStarted', 'promptsChecked', 'recordReply', 'record', 'reportToParent', 'pause', 'markStopHookActive'),
  /** `ActionsRun` (runner/turn.ts): the reply's tool calls, their approval (the actions waiting, then none) and the agent's answer. */
  actions: allow('record', 'showDetails', 'setFinalMessage', 'pause', 'setStatus', 'carryStep', 'askConfirmation', 'clearConfirmation'),
  /** `applyOutcome` (runner/turn.ts): the status a turn ends in. */
  outcome: allow('setStatus', 'markStuck', 'fail'),
  /** `HooksRun` (hooks/workflow/hooks.ts): what the hooks said. */
  hooks: allow('record'),
  /** `DelegatingRun` (sub-agents/workflow/sub-agents.ts): a sub-agent's start, end and work. */
  delegating: allow('childStarted', 'childUpdated', 'addChildWork', 'record', 'recordAndShow'),
  /** `CheckpointRun` (time-travel/workflow/workspace-checkpoints.ts): checkpoints, a rewind and its answer, a fork's workspace. */
  checkpoint: allow('recordCheckpoint', 'recordRewind', 'forkMade', 'record', 'fail', 'answerRewind'),
  /** `PoolHostRun` (pool/workflow/pool-host.ts): a claimed host, and the terminal moved onto it. */
  poolHost: allow('setToolState', 'recordAndShow'),
  /** `HibernateRun` (pool/workflow/pool-host.ts): the details, once the host's folder is given back. */
  hibernate: allow('showDetails'),
  /** `MidStepHibernateRun` (pool/workflow/pool-host.ts): the details, or why the folder could not go. */
  midStepHibernate: allow('recordAndShow', 'showDetails'),
};

/** A phase of the loop, as `PHASE_COMMANDS` names it. */
export type Phase = keyof typeof PHASE_COMMANDS;

/** A command phase `P` may apply. */
export type PhaseCommand<P extends Phase> = (typeof PHASE_COMMANDS)[P][keyof (typeof PHASE_COMMANDS)[P]];

/** `ConversationRun.apply` as phase `P` sees it: only its own commands (a view made of several phases has each one's). */
export interface Applies<P extends Phase> {
  readonly apply: <A extends unknown[], T>(command: PhaseCommand<P> & Command<A, T>, ...args: A) => T;
}
