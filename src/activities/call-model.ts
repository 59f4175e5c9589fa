// Activity: one chat-completions call. Heartbeats while waiting so that a pause (activity
// cancellation) aborts the HTTP request at once and a dead worker is noticed quickly.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { TranscriptCache } from '../conversation/read-events.js';
import type { SetupCache } from '../conversation/setup-cache.js';
import { HEARTBEAT_EVERY_MS, type ModelClients } from '../llm/client.js';
import { functionTool, planCall, toolSpec, type ToolRegistry } from '../tools/registry.js';
import type { ModelCallInput, ModelCallResult, ToolSpec } from '../types.js';
import { buildMessages, withInstructions } from '../workflows/prompt.js';

export function createCallModel(models: ModelClients, transcripts: TranscriptCache, setups: SetupCache, registry: ToolRegistry) {
  return async function callModel(input: ModelCallInput): Promise<ModelCallResult> {
    const ctx = Context.current();
    const { resolved, client } = models.get(input.llm);
    // No heartbeat at the start: a call shorter than the interval costs the server none, and a
    // cancellation is only ever delivered in the answer to a later heartbeat anyway.
    const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
    try {
      // The transcript and the setup are read here, not passed in, so that history holds them once.
      const handle = ctx.client.workflow.getHandle(input.conversationId);
      const events = await transcripts.read(handle, input.eventCount, ctx.info.attempt, input.recent);
      let specs: ToolSpec[];
      let systemPrompt = input.systemPrompt;
      if (input.setupVersion !== undefined) {
        const setup = await setups.read(handle, input.setupVersion, ctx.info.workflowExecution?.runId ?? '', ctx.info.attempt);
        specs = setup.tools;
        systemPrompt = withInstructions(systemPrompt, setup.instructions);
      } else {
        // A conversation from before tools were open: the built-ins by name.
        specs = input.tools.flatMap((name) => {
          const tool = registry.get(name);
          return tool ? [toolSpec(tool)] : [];
        });
      }
      const messages = buildMessages(events, systemPrompt);
      const started = performance.now();
      const response = await client.chat.completions.create(
        {
          model: resolved.apiModel,
          messages,
          ...(specs.length ? { tools: specs.map(functionTool) } : {}),
          ...(input.llm.temperature !== undefined ? { temperature: input.llm.temperature } : {}),
        },
        { signal: ctx.cancellationSignal },
      );
      const latencyMs = Math.round(performance.now() - started);
      const message = response.choices?.[0]?.message;
      if (!message) throw ApplicationFailure.retryable('the model answered with no choices', 'ModelBadResponse');
      const byName = new Map(specs.map((t) => [t.name, t]));
      const toolCalls = (message.tool_calls ?? []).flatMap((call, i) => {
        if (call.type !== 'function') return [];
        const c = { id: call.id || `call_${input.step}_${i}`, name: call.function.name, arguments: call.function.arguments ?? '' };
        return [{ ...c, plan: planCall(registry, byName.get(c.name), c) }];
      });
      return {
        id: response.id || `reply_${input.step}`,
        model: response.model || resolved.apiModel,
        content: message.content ?? null,
        toolCalls,
        ...models.usage(response, resolved),
        latencyMs,
      };
    } catch (err) {
      throw models.failure(err, resolved, ctx.cancellationSignal);
    } finally {
      clearInterval(beat);
    }
  };
}
