// Activity: one call of any host tool (built-in, yours, or an MCP server's) on the workspace's host.
// Validates the arguments with the tool's schema, keeps a crash from running a call twice, heartbeats
// while it runs, and turns whatever happens into an observation.
import { Context } from '@temporalio/activity';
import type { CancelledFailure } from '@temporalio/common';
import type { McpManager } from '../mcp/manager.js';
import { redact } from '../security/redact.js';
import { describeInvalid, retryClass } from './define.js';
import { interruptedFailure, partialOutputOf } from './interrupted.js';
import type { ToolRegistry } from './registry.js';
import { execInWorkspace, hiddenDirs, type Sandbox } from '../sandbox/sandbox.js';
import { leaseNetwork } from '../sandbox/kept-network.js';
import { commandBaseEnv } from '../security/env-policy.js';
import type { RunToolInput, RunToolResult } from '../core/types.js';
import { checkImageRefs } from '../images/workflow/image-refs.js';
import { withHeartbeat } from '../conversation/heartbeat.js';
import { NO_LIVE, type LivePublisher, type LiveSink } from '../live/publisher.js';
import type { StartLog } from '../conversation/start-log.js';
import type { CheckpointStore } from '../time-travel/shadow-repo.js';
import { checkpointWithin } from '../time-travel/checkpoint-with.js';
import { toolNotAvailable } from '../conversation/tool-not-available.js';
import type { ChildEnv } from '../environment.js';

export interface RunToolDeps {
  registry: ToolRegistry;
  starts: StartLog;
  mcp: McpManager;
  /** Values to mask in every result. */
  secretValues: readonly string[];
  /** FAHEEM_SECRET_<NAME> values by NAME, for ctx.secrets. */
  namedSecrets: Readonly<Record<string, string>>;
  /** The worker's environment (what ctx.exec's programs start from, less its secrets). */
  env: ChildEnv;
  /** Where ctx.exec runs programs (default: unsandboxed). */
  sandbox?: Sandbox;
  /** Where a call's output goes as it comes (ctx.output), for followers; default: nowhere. */
  live?: LivePublisher;
  /** Where a step's checkpoint goes when the call carries it (RunToolInput.checkpoint). */
  checkpoints?: CheckpointStore;
  /** How often a call heartbeats (default HEARTBEAT_EVERY_MS; src/client/pause-channel.ts). */
  heartbeatEveryMs?: number;
}

/** A result longer than this keeps its head and tail: every character goes to the model and into history. */
export const MAX_RESULT_CHARS = 50_000;

function clip(text: string): string {
  if (text.length <= MAX_RESULT_CHARS) return text;
  const half = MAX_RESULT_CHARS / 2;
  return `${text.slice(0, half)}\n[… ${text.length - MAX_RESULT_CHARS} characters cut …]\n${text.slice(-half)}`;
}

export function createRunTool(deps: RunToolDeps) {
  const env = deps.env;
  const execEnv = commandBaseEnv(env);
  async function runTool(input: RunToolInput): Promise<RunToolResult> {
    const ctx = Context.current();
    const started = Date.now();
    const result = await run(input, ctx);
    // The step's checkpoint right after its last host call (see checkpoint-with.ts).
    const checkpoint = input.checkpoint
      ? await checkpointWithin(deps.checkpoints, { ...input, step: input.checkpoint.step }, ctx, started, deps.heartbeatEveryMs)
      : undefined;
    return { ...result, content: clip(redact(result.content, deps.secretValues)), ...(checkpoint ? { checkpoint } : {}) };
  }

  async function run(input: RunToolInput, ctx: Context): Promise<RunToolResult> {
    if (input.mcp) return runMcp(input, input.mcp, ctx);
    const tool = deps.registry.get(input.tool);
    if (!tool) {
      return { content: toolNotAvailable(input.tool, ctx.info.taskQueue), isError: true };
    }
    const parsed = tool.parameters.safeParse(input.arguments);
    if (!parsed.success) return { content: describeInvalid(tool.name, parsed.error), isError: true };
    // An earlier attempt that may have begun was cut off (its worker died), perhaps after effects.
    // Running it again could do them twice, so tell the model instead, unless a repeat is harmless.
    if (retryClass(tool, parsed.data) === 'report' && (await deps.starts.claim(ctx.info, callKey(input)))) {
      return {
        content: tool.interruptedMessage ?? effectsUnknown(tool.name),
        isError: true,
        ...(tool.name === 'terminal' ? { exitCode: -1 } : {}),
      };
    }
    const live = openLive(input, ctx);
    try {
      const out = await withHeartbeat(
        async () =>
          tool.execute(parsed.data, {
            output: (text: string) => live.push({ kind: 'output_delta', text: String(text), toolCallId: input.toolCallId }),
            conversationId: input.conversationId,
            toolCallId: input.toolCallId,
            workspace: input.workspace,
            signal: ctx.cancellationSignal,
            heartbeat: (details?: unknown) => ctx.heartbeat(details),
            secrets: deps.namedSecrets,
            state: input.state,
            attempt: ctx.info.attempt,
            exec: async (command, args = [], options = {}) => {
              // In the conversation's kept network, as its terminal commands are (kept-network.ts).
              const lease = await leaseNetwork(deps.sandbox, input.conversationId);
              try {
                return await execInWorkspace(command, args, {
                  ...options,
                  workspace: input.workspace,
                  sandbox: deps.sandbox,
                  baseEnv: execEnv,
                  hide: deps.sandbox ? hiddenDirs(env) : [],
                  signal: ctx.cancellationSignal,
                  ...(lease ? { keptNetwork: lease.network } : {}),
                });
              } finally {
                lease?.release();
              }
            },
          }),
        { context: ctx, everyMs: deps.heartbeatEveryMs },
      );
      if (typeof out === 'string') return { content: out, isError: false };
      if (!out || typeof out.content !== 'string') {
        return { content: `The tool ${tool.name} returned no text (it must return a string or { content }).`, isError: true };
      }
      return {
        content: out.content,
        isError: out.isError === true,
        ...(out.exitCode !== undefined ? { exitCode: out.exitCode } : {}),
        ...(out.state !== undefined ? { state: out.state } : {}),
        ...(out.images?.length ? { images: checkImageRefs(out.images) } : {}),
      };
    } catch (err) {
      const interrupted = interruptedOr(err, ctx);
      if (interrupted) throw interrupted;
      // The tool's own failure is something for the model to read, not for Temporal to retry.
      return { content: `The tool ${tool.name} failed: ${(err as Error)?.message ?? String(err)}`, isError: true };
    } finally {
      // Interrupted (pause --now): the last lines go out in the background, the pause does not wait for them.
      if (ctx.cancellationSignal.aborted) void live.close();
      else await live.close();
    }
  }

  /** This call's live sink; a later attempt first tells followers to drop what the lost one showed. */
  function openLive(input: RunToolInput, ctx: Context): LiveSink {
    const sink = deps.live ? deps.live.open(ctx.client, input.conversationId) : NO_LIVE;
    if (ctx.info.attempt > 1) {
      sink.push({
        kind: 'retry',
        text: `${input.tool} started again (attempt ${ctx.info.attempt}): drop the output the earlier attempt showed`,
        toolCallId: input.toolCallId,
        attempt: ctx.info.attempt,
      });
    }
    return sink;
  }

  async function runMcp(input: RunToolInput, mcp: NonNullable<RunToolInput['mcp']>, ctx: Context): Promise<RunToolResult> {
    const args = input.arguments;
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      return { content: `The arguments of ${input.tool} must be a JSON object.`, isError: true };
    }
    if (mcp.retry === 'report' && (await deps.starts.claim(ctx.info, callKey(input)))) {
      return {
        content: effectsUnknown(input.tool),
        isError: true,
      };
    }
    try {
      return await withHeartbeat(
        () =>
          deps.mcp.callTool(input.conversationId, { [mcp.server]: mcp.config }, mcp.server, mcp.tool, args as Record<string, unknown>, {
            signal: ctx.cancellationSignal,
            cwd: input.workspace,
          }),
        { context: ctx, everyMs: deps.heartbeatEveryMs },
      );
    } catch (err) {
      throw interruptedOr(err, ctx) ?? err;
    }
  }

  /** A call stopped by `pause --now`: its partial output (masked, clipped) travels in the cancellation's details. */
  function interruptedOr(err: unknown, ctx: Context): CancelledFailure | undefined {
    if (!ctx.cancellationSignal.aborted) return undefined;
    const partial = partialOutputOf(err);
    return interruptedFailure(partial !== undefined ? clip(redact(partial, deps.secretValues)) : '');
  }

  return { runTool };
}

/** What the model reads for a call cut off by a crash that may have had effects (retry class `report`). */
function effectsUnknown(tool: string): string {
  return `This call of ${tool} may have run, but the worker running it stopped before it reported a result. Its effects are unknown: check before calling it again.`;
}

/** The call's own key in the start log (one tool call may be scheduled twice: see RunToolInput.rescheduled). */
function callKey(input: RunToolInput): { key: string; rescheduled: boolean } {
  return { key: input.toolCallId, rescheduled: input.rescheduled === true };
}
