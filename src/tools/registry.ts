// The tools a worker can run: the built-ins plus the ones it was given. Turns definitions into the
// plain-data specs a conversation keeps, and works out per call what the definition says about it
// (approval, time limit, the Web UI line).
import { InvalidRequestError } from '../core/errors.js';
import { z } from 'zod';
import { TOOL_NAMES, type ChatToolCall, type ToolCallPlan, type ToolSpec } from '../core/types.js';
import { builtinTools, isBuiltinTool, type BuiltinConfig } from './builtin.js';
import { isTool, type AnyTool } from './define.js';

export class ToolRegistry {
  private readonly tools = new Map<string, AnyTool>();
  private readonly custom: string[] = [];

  /** `custom`: the worker's own tools; `config`: what the built-ins are made from (the worker's environment). */
  constructor(custom: readonly unknown[], config: BuiltinConfig) {
    for (const t of builtinTools(config)) this.tools.set(t.name, t);
    for (const t of custom) {
      if (isBuiltinTool(t)) continue; // always there (this worker's own); listing them is harmless
      if (!isTool(t)) throw new InvalidRequestError(`createWorker: ${describeValue(t)} is not a tool made with defineTool`);
      if ((TOOL_NAMES as readonly string[]).includes(t.name))
        throw new InvalidRequestError(`createWorker: "${t.name}" is a built-in tool's name; give yours another`);
      const existing = this.tools.get(t.name);
      if (existing && existing !== t) throw new InvalidRequestError(`createWorker: two different tools are named "${t.name}"`);
      if (!existing) this.custom.push(t.name);
      this.tools.set(t.name, t);
    }
  }

  get(name: string): AnyTool | undefined {
    return this.tools.get(name);
  }

  /** Names of the tools this worker was given besides the built-ins. */
  customNames(): string[] {
    return [...this.custom];
  }
}

const specs = new WeakMap<AnyTool, ToolSpec>();

/** The plain-data spec of a tool (its JSON Schema is made once per tool). */
export function toolSpec(tool: AnyTool): ToolSpec {
  let spec = specs.get(tool);
  if (!spec) {
    const parameters = z.toJSONSchema(tool.parameters, { io: 'input' }) as Record<string, unknown>;
    delete parameters.$schema; // the API wants the schema itself, not its dialect
    // The input side (defaults are optional for the model) leaves this out; say so, as the output side would.
    if (parameters.type === 'object' && !('additionalProperties' in parameters)) parameters.additionalProperties = false;
    spec = {
      name: tool.name,
      description: tool.description,
      parameters,
      runsIn: tool.inWorkflow ? 'workflow' : 'host',
      needsApproval: typeof tool.needsApproval === 'function' ? 'per-call' : (tool.needsApproval ?? false),
    };
    specs.set(tool, spec);
  }
  return spec;
}

export interface FunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

const functionTools = new WeakMap<ToolSpec, FunctionTool>();

/** What the chat-completions API gets for a spec (made once per spec object). */
export function functionTool(spec: ToolSpec): FunctionTool {
  let f = functionTools.get(spec);
  if (!f) {
    f = { type: 'function', function: { name: spec.name, description: spec.description, parameters: spec.parameters } };
    functionTools.set(spec, f);
  }
  return f;
}

/**
 * What the definition says about one call. The tool's own functions (needsApproval, timeout,
 * summary) run on a worker that has the tool; elsewhere the spec decides, and a per-call approval
 * it cannot work out counts as needed.
 */
export function planCall(registry: ToolRegistry, spec: ToolSpec | undefined, call: Pick<ChatToolCall, 'name' | 'arguments'>): ToolCallPlan {
  const tool = registry.get(call.name);
  if (spec?.mcp) return { needsApproval: spec.needsApproval === true, summary: `${spec.mcp.server} · ${spec.mcp.tool}` };
  if (!tool) return spec ? { needsApproval: spec.needsApproval !== false } : {};
  let args: unknown;
  try {
    args = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch {
    return { needsApproval: false }; // it will not run: the model gets told the JSON is invalid
  }
  const parsed = tool.parameters.safeParse(args);
  if (!parsed.success) return { needsApproval: false }; // it will not run: the worker reports the invalid arguments
  const plan: ToolCallPlan = {};
  try {
    const a = parsed.data as unknown;
    plan.needsApproval = typeof tool.needsApproval === 'function' ? tool.needsApproval(a) === true : tool.needsApproval === true;
    const timeout = typeof tool.timeoutSeconds === 'function' ? tool.timeoutSeconds(a) : tool.timeoutSeconds;
    if (timeout !== undefined && Number.isFinite(timeout) && timeout > 0) plan.timeoutSeconds = timeout;
    const summary = tool.summary?.(a);
    if (summary) plan.summary = summary;
  } catch {
    plan.needsApproval = true; // the tool's own rule failed: ask rather than guess
  }
  return plan;
}

function describeValue(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? String(v);
  const name = (v as { name?: unknown }).name;
  return typeof name === 'string' ? `"${name}"` : 'a value';
}
