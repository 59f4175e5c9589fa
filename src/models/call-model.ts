// Activity: one model call, streamed. Heartbeats while the reply streams in so that a pause
// (activity cancellation) aborts the request at once and a dead worker is noticed quickly. The
// skeleton (`streamModelCall`) is shared with condensation.
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure, msToNumber } from '@temporalio/common';
import { nextRetry, retryLine } from './retry-note.js';
import type { TranscriptCache } from '../conversation/read-events.js';
import type { SetupCache } from '../conversation/setup-cache.js';
import type { ModelClients, ModelOutcome, ModelRequest } from './client.js';
import type { PartialListener, PartialReply } from './stream.js';
import { replyDeltas } from '../live/deltas.js';
import { NO_LIVE, type LivePublisher, type LiveSink } from '../live/publisher.js';
import { planCall, toolSpec, type ToolRegistry } from '../tools/registry.js';
import type { ImageRef, ModelCallInput, ModelCallResult, ToolSpec } from '../core/types.js';
import { withImageData, type ImageCache, type ImageReader } from '../images/prompt-images.js';
import { buildMessages, withInstructions, withSkills } from '../conversation/workflow/prompt.js';
import { withHeartbeat } from '../conversation/heartbeat.js';
import { checkOutput, checkOutputSchema, outputInstructions, type OutputSchema } from './structured-output.js';
import { FAILURE, failure } from '../core/failure-types.js';
import { answerDue } from '../conversation/workflow/output-check.js';

/**
 * One streamed model call inside an activity: heartbeats while it runs, aborts on cancellation.
 * `prepare` (reading the transcript, say) runs under the same heartbeat.
 */
export async function streamModelCall(
  models: ModelClients,
  prepare: () => Promise<Omit<ModelRequest, 'onPartial' | 'onRetry'>>,
  onPartial?: PartialListener,
  beatEveryMs?: number,
  details?: () => unknown,
  onRetry?: (note: string) => void,
): Promise<ModelOutcome> {
  const ctx = Context.current();
  return withHeartbeat(
    async () => {
      const request = await prepare();
      return models.complete({ ...request, ...(onPartial ? { onPartial } : {}), ...(onRetry ? { onRetry } : {}) }, ctx.cancellationSignal);
    },
    { context: ctx, everyMs: beatEveryMs, ...(details ? { details } : {}) },
  );
}

/**
 * The model-call activity. With `live`, followers see the reply grow (text, thinking, tool-call
 * arguments); the activity's result is the whole reply, as before.
 */
export function createCallModel(
  models: ModelClients,
  transcripts: TranscriptCache,
  setups: SetupCache,
  registry: ToolRegistry,
  live?: LivePublisher,
  /** How often the call heartbeats (default HEARTBEAT_EVERY_MS). */
  beatEveryMs?: number,
  /** Reads the bytes of the images the prompt refers to (from the object store). */
  images?: { read: ImageReader; cache: ImageCache; onMissing?: (ref: ImageRef, err: unknown) => void },
) {
  return async function callModel(input: ModelCallInput): Promise<ModelCallResult> {
    const ctx = Context.current();
    const sink = live ? live.open(ctx.client, input.conversationId) : NO_LIVE;
    try {
      return await call(input, ctx, sink);
    } finally {
      // Interrupted (a pause): the last lines go out in the background, the pause does not wait for them.
      if (ctx.cancellationSignal.aborted) void sink.close();
      else await sink.close();
    }
  };

  async function call(input: ModelCallInput, ctx: Context, sink: LiveSink): Promise<ModelCallResult> {
    sink.push({ kind: 'step_start', text: '', step: input.step, eventCount: input.eventCount });
    // An earlier attempt that could not say why it ended (its worker died): any reply it showed is
    // void. (Its heartbeats reach the server at most twice a second, so whether it had shown one is
    // not known here.) One that failed in its worker said so in its own line, and why.
    const earlier = ctx.info.heartbeatDetails as AttemptDetails | undefined;
    if (ctx.info.attempt > 1 && !earlier?.reported) {
      sink.push({
        kind: 'retry',
        text: `the model call of step ${input.step} started again (attempt ${ctx.info.attempt}) after its worker stopped answering: drop any partial reply the earlier attempt showed`,
        step: input.step,
        eventCount: input.eventCount,
        attempt: ctx.info.attempt,
      });
    }
    let specs: ToolSpec[] = [];
    let outputSchema: OutputSchema | undefined;
    let shown: PartialReply | undefined;
    const listener: PartialListener = (p) => {
      for (const item of replyDeltas(shown, p, input.step, input.eventCount)) sink.push(item);
      shown = p;
    };
    try {
      return await reply();
    } catch (err) {
      if (ctx.cancellationSignal.aborted || err instanceof CancelledFailure) throw err;
      // Followers see why, and whether and when it is tried again (the workflow records the last failure).
      const failure = err instanceof ApplicationFailure ? err : undefined;
      const next = failure?.nonRetryable ? undefined : nextRetry(ctx.info.retryPolicy, ctx.info.attempt, retryDelayOf(failure));
      if (next || !failure?.nonRetryable) {
        sink.push({
          kind: 'retry',
          text: retryLine((err as Error).message, next, ctx.info.attempt, shown !== undefined),
          step: input.step,
          eventCount: input.eventCount,
          attempt: ctx.info.attempt,
        });
      }
      ctx.heartbeat({ partial: shown !== undefined, reported: true } satisfies AttemptDetails);
      throw err;
    }

    async function reply(): Promise<ModelCallResult> {
      const reply = await streamModelCall(
        models,
        async () => {
          // The transcript and the setup are read here, not passed in, so that history holds them once.
          const handle = ctx.client.workflow.getHandle(input.conversationId);
          const events = await transcripts.read(handle, input.eventCount, ctx.info.attempt, input.recent);
          let systemPrompt = input.systemPrompt;
          if (input.setupVersion !== undefined) {
            const setup = await setups.read(handle, input.setupVersion, ctx.info.workflowExecution?.runId ?? '', ctx.info.attempt);
            specs = setup.tools;
            systemPrompt = withSkills(withInstructions(systemPrompt, setup.instructions), setup.skills);
            // Checked again here: a client that does not check (Python, a hand-made start) cannot wedge the loop with a bad one.
            outputSchema = setup.outputSchema ? checkedSchema(setup.outputSchema) : undefined;
            if (outputSchema) systemPrompt = `${systemPrompt}\n\n${outputInstructions(outputSchema)}`;
          } else {
            // A conversation from before tools were open: the built-ins by name.
            specs = input.tools.flatMap((name) => {
              const tool = registry.get(name);
              return tool ? [toolSpec(tool)] : [];
            });
          }
          let messages = buildMessages(events, systemPrompt);
          // History holds image references only: the bytes come from the object store now.
          if (images) messages = await withImageData(messages, images.read, images.cache, images.onMissing);
          return {
            llm: input.llm,
            messages,
            tools: specs,
            conversationId: input.conversationId,
            // The answer is due after an output check: Anthropic's call is then a forced tool.
            ...(outputSchema ? { output: { schema: outputSchema, force: answerDue(events) } } : {}),
          };
        },
        listener,
        beatEveryMs,
        () => ({ partial: shown !== undefined }) satisfies AttemptDetails,
        // A fallback chain asks again or moves on: followers drop what they were shown of this try.
        (note) => {
          sink.push({
            kind: 'retry',
            text: `${note}${shown !== undefined ? '; the partial reply above is dropped' : ''}`,
            step: input.step,
            eventCount: input.eventCount,
            attempt: ctx.info.attempt,
          });
          shown = undefined;
        },
      );
      const byName = new Map(specs.map((t) => [t.name, t]));
      const toolCalls = reply.toolCalls.map((call, i) => {
        const c = { id: call.id || `call_${input.step}_${input.eventCount}_${i}`, name: call.name, arguments: call.arguments };
        return { ...c, ...(call.itemId ? { itemId: call.itemId } : {}), plan: planCall(registry, byName.get(c.name), c) };
      });
      return {
        id: reply.id || `reply_${input.step}_${input.eventCount}`,
        model: reply.model,
        content: reply.content,
        toolCalls,
        usage: reply.usage,
        cost: reply.cost,
        latencyMs: reply.latencyMs,
        // Absent when empty, so results without them look as they did.
        ...(reply.reasoning.length ? { reasoning: reply.reasoning } : {}),
        ...(reply.truncated ? { truncated: true } : {}),
        // The final answer checked here, where the validator lives (the workflow only reads the verdict).
        ...(outputSchema && toolCalls.length === 0 ? { outputCheck: checkOutput(outputSchema, reply.content) } : {}),
        ...(reply.fallbacks?.length ? { answeredBy: reply.answeredBy, fallbacks: reply.fallbacks } : {}),
      };
    }
  }
}

/** What a model call's heartbeats carry: whether it showed part of a reply, and (last) whether it said why it failed. */
interface AttemptDetails {
  partial: boolean;
  reported?: boolean;
}

/** A provider's own "come back in" (Retry-After), which Temporal uses instead of the policy's delay. */
function retryDelayOf(failure: ApplicationFailure | undefined): number | undefined {
  const delay = failure?.nextRetryDelay;
  return delay === undefined || delay === null ? undefined : msToNumber(delay);
}

/** The conversation's output schema, or a failure no retry can mend (the conversation ends in `error`, saying why). */
function checkedSchema(schema: unknown): OutputSchema {
  try {
    return checkOutputSchema(schema);
  } catch (err) {
    throw failure(FAILURE.OutputSchemaInvalid, `the conversation's output schema: ${(err as Error).message}`);
  }
}
