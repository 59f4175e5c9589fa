// What each phase of the loop may write (src/conversation/workflow/runner/phase-commands.ts): a
// phase's view of the run applies only its own set of commands. Held at compile time (the
// `@ts-expect-error` lines below: npm run typecheck fails when a view accepts another phase's
// command, or a command not taken from a set), and at run time for the table itself: each set is
// the one listed here, holds the functions of commands.ts, and is what its phase's file applies.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { ModelCallResult } from '../../../../../src/core/types.js';
import * as commands from '../../../../../src/conversation/workflow/runner/commands.js';
import type { CondenserRun } from '../../../../../src/conversation/workflow/runner/condenser.js';
import type { ConversationRun } from '../../../../../src/conversation/workflow/runner/conversation-run.js';
import type { WaitRun } from '../../../../../src/conversation/workflow/runner/durable-wait.js';
import type { HostCallRun } from '../../../../../src/conversation/workflow/runner/host-call.js';
import type { ModelCallRun } from '../../../../../src/conversation/workflow/runner/model-call.js';
import { PHASE_COMMANDS, type Phase } from '../../../../../src/conversation/workflow/runner/phase-commands.js';
import type { SetupRun } from '../../../../../src/conversation/workflow/runner/setup.js';
import type { ToolCallRun } from '../../../../../src/conversation/workflow/runner/tool-dispatch.js';
import type { ActionsRun, TurnRun, applyOutcome } from '../../../../../src/conversation/workflow/runner/turn.js';
import type { HooksRun } from '../../../../../src/hooks/workflow/hooks.js';
import type { HibernateRun, MidStepHibernateRun, PoolHostRun } from '../../../../../src/pool/workflow/pool-host.js';
import type { DelegatingRun } from '../../../../../src/sub-agents/workflow/sub-agents.js';
import type { CheckpointRun } from '../../../../../src/time-travel/workflow/workspace-checkpoints.js';

/** Each phase's commands: a change to a set is a change to what a phase may write, made here too. */
const SUBSETS: Record<Phase, string[]> = {
  setup: ['setSetup', 'record', 'processesStopAsked'],
  modelCall: ['eventsSent', 'modelSaw'],
  condenser: ['recordCondensation', 'condensationFailed'],
  toolCall: ['setToolState'],
  hostCall: ['recordAndShow'],
  wait: ['beginWait', 'endWait', 'carryStep'],
  turn: ['markSessionStarted', 'promptsChecked', 'recordReply', 'record', 'reportToParent', 'pause', 'markStopHookActive'],
  actions: ['record', 'showDetails', 'setFinalMessage', 'pause', 'setStatus', 'carryStep', 'askConfirmation', 'clearConfirmation'],
  outcome: ['setStatus', 'markStuck', 'fail'],
  hooks: ['record'],
  delegating: ['childStarted', 'childUpdated', 'addChildWork', 'record', 'recordAndShow'],
  checkpoint: ['recordCheckpoint', 'recordRewind', 'forkMade', 'record', 'fail', 'answerRewind'],
  poolHost: ['setToolState', 'recordAndShow'],
  hibernate: ['showDetails'],
  midStepHibernate: ['recordAndShow', 'showDetails'],
};

/** The file (under src/) where each phase's commands are applied. */
const HOME: Record<Phase, string> = {
  setup: 'conversation/workflow/runner/setup.ts',
  modelCall: 'conversation/workflow/runner/model-call.ts',
  condenser: 'conversation/workflow/runner/condenser.ts',
  toolCall: 'conversation/workflow/runner/tool-dispatch.ts',
  hostCall: 'conversation/workflow/runner/host-call.ts',
  wait: 'conversation/workflow/runner/durable-wait.ts',
  turn: 'conversation/workflow/runner/turn.ts',
  actions: 'conversation/workflow/runner/turn.ts',
  outcome: 'conversation/workflow/runner/turn.ts',
  hooks: 'hooks/workflow/hooks.ts',
  delegating: 'sub-agents/workflow/sub-agents.ts',
  checkpoint: 'time-travel/workflow/workspace-checkpoints.ts',
  poolHost: 'pool/workflow/pool-host.ts',
  hibernate: 'pool/workflow/pool-host.ts',
  midStepHibernate: 'pool/workflow/pool-host.ts',
};

/** The workflow's glue and handlers: they apply any command through ConversationRun.apply. */
const GLUE = [
  'conversation/workflow/conversation.ts',
  'conversation/workflow/runner/conversation-run.ts',
  'conversation/workflow/runner/handlers.ts',
];

const { turn, actions, setup, checkpoint } = PHASE_COMMANDS;

/**
 * Never called: the compiler checks it. Each `@ts-expect-error` line applies a command its view
 * does not have; were the view to accept it, the directive would be unused and typecheck would fail.
 */
function typeChecks(
  views: {
    setup: SetupRun;
    modelCall: ModelCallRun;
    condenser: CondenserRun;
    toolCall: ToolCallRun;
    hostCall: HostCallRun;
    wait: WaitRun;
    turn: TurnRun;
    actions: ActionsRun;
    hooks: HooksRun;
    delegating: DelegatingRun;
    checkpoint: CheckpointRun;
    poolHost: PoolHostRun;
    hibernate: HibernateRun;
    midStepHibernate: MidStepHibernateRun;
    outcome: Parameters<typeof applyOutcome>[0];
  },
  run: ConversationRun,
  reply: ModelCallResult,
): void {
  // Its own commands, and (a view made of several phases) its parts'.
  views.setup.apply(setup.record, { kind: 'error', source: 'environment', message: '' });
  views.turn.apply(turn.recordReply, reply);
  views.turn.apply(setup.processesStopAsked);
  views.hibernate.apply(PHASE_COMMANDS.hibernate.showDetails);
  // The glue applies any command, taken from a set or not.
  run.apply(turn.recordReply, reply);
  run.apply(commands.close);

  // Another phase's command.
  // @ts-expect-error the model's reply is the turn's to record
  views.setup.apply(turn.recordReply, reply);
  // @ts-expect-error the model call records no event of its own
  views.modelCall.apply(setup.record, { kind: 'error', source: 'environment', message: '' });
  // @ts-expect-error a condensation pauses nothing
  views.condenser.apply(turn.pause, {});
  // @ts-expect-error a tool call sets no status
  views.toolCall.apply(actions.setStatus, 'finished');
  // @ts-expect-error waiting for the host shows the details with its events only (recordAndShow)
  views.hostCall.apply(actions.showDetails);
  // @ts-expect-error a wait fails nothing
  views.wait.apply(checkpoint.fail, '', { event: true });
  // @ts-expect-error the turn's hook points record events; the hooks do not pause
  views.hooks.apply(turn.pause, {});
  // @ts-expect-error a sub-agent's call records no checkpoint
  views.delegating.apply(checkpoint.recordCheckpoint, 1, { added: 0, changed: 0, deleted: 0 });
  // @ts-expect-error a checkpoint records no reply
  views.checkpoint.apply(turn.recordReply, reply);
  // @ts-expect-error the tool calls do not count model calls
  views.actions.apply(turn.recordReply, reply);
  // @ts-expect-error a turn's end marks no session start
  views.outcome.apply(turn.markSessionStarted);
  // @ts-expect-error claiming a host sets no final message
  views.poolHost.apply(actions.setFinalMessage, '');
  // @ts-expect-error a mid-step hibernation sets no tool state
  views.midStepHibernate.apply(PHASE_COMMANDS.poolHost.setToolState, 'terminal', {});
  // Same shape as showDetails (the snapshot and the facts, nothing else), another command: kept apart by its name.
  // @ts-expect-error hibernating reports nothing to the parent
  views.hibernate.apply(turn.reportToParent);
  // @ts-expect-error hibernating marks no session start
  views.hibernate.apply(turn.markSessionStarted);
  // A command not taken from a set has no name: no phase applies it.
  // @ts-expect-error the same function as the hibernation's showDetails, taken from commands.ts
  views.hibernate.apply(commands.showDetails);
  // @ts-expect-error a user's close, not a phase's
  views.turn.apply(commands.close);
}

/** What a file applies: the command named first in each `.apply(` call. */
function applied(text: string): Set<string> {
  return new Set([...text.matchAll(/\.apply\(\s*(\w+)/g)].map((m) => m[1]!));
}

const SRC = path.join(import.meta.dirname, '..', '..', '..', '..', '..', 'src');

test('the compile-time checks are part of the build', () => {
  assert.equal(typeof typeChecks, 'function');
});

test('each phase may apply the commands listed here, which are those of commands.ts', () => {
  assert.deepEqual(Object.keys(PHASE_COMMANDS).sort(), Object.keys(SUBSETS).sort());
  for (const [phase, set] of Object.entries(PHASE_COMMANDS)) {
    assert.deepEqual(Object.keys(set), SUBSETS[phase as Phase], phase);
    for (const [name, command] of Object.entries(set))
      assert.equal(command, (commands as Record<string, unknown>)[name], `${phase}.${name} is commands.${name}`);
  }
});

test("every phase's file applies its sets' commands, taken from its sets", () => {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && f.split(path.sep).includes('workflow'))
    .map((f) => f.split(path.sep).join('/'));
  const homes = new Set(Object.values(HOME));
  for (const file of files) {
    const text = readFileSync(path.join(SRC, file), 'utf8');
    if (GLUE.includes(file)) continue;
    const uses = applied(text);
    if (!homes.has(file)) {
      assert.deepEqual([...uses], [], `${file} applies commands: name its phase in PHASE_COMMANDS and HOME`);
      continue;
    }
    const phases = (Object.keys(HOME) as Phase[]).filter((p) => HOME[p] === file);
    const allowed = new Set(phases.flatMap((p) => SUBSETS[p]));
    // Not a command in the sets that it does not apply (a set says what a phase writes today, no more).
    assert.deepEqual([...uses].sort(), [...allowed].sort(), `${file} (${phases.join(', ')})`);
    // Its commands come through its sets only: no value import of commands.ts.
    assert.doesNotMatch(text, /^import \{[^}]*\} from '[^']*\/commands\.js';/m, file);
    for (const m of text.matchAll(/const \{([^}]*)\} = PHASE_COMMANDS\.(\w+);/g)) {
      const names = m[1]!
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean);
      const from = m[2] as Phase;
      assert.ok(phases.includes(from), `${file} takes commands from ${from}, the set of another file`);
      for (const name of names) assert.ok(SUBSETS[from].includes(name), `${file}: ${name} is not in ${from}`);
    }
  }
});
