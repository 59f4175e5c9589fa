// The agent in the operator's tools, on real parts: a worker with an OTLP endpoint exports traces to
// a small OTLP/HTTP (JSON) receiver started here, and serves Prometheus text on --metrics-port.
// A conversation started by the CLI is one trace: the CLI's start, the workflow, its activities and
// our GenAI spans inside them (`chat <model>`, `execute_tool <tool>`, with `gen_ai.*` attributes);
// no key and no message content leave the worker. /metrics carries our counters after a countdown.
import assert from 'node:assert/strict';
import { execa } from 'execa';
import { createServer, type Server } from 'node:http';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { RecordedRequest, ScriptedReply } from '../../src/testing/scripted-model.js';
import { FAKE_KEY, freePort, ROOT, startHarness, waitFor, type Harness } from '../support/harness.js';

/** One span as OTLP/JSON carries it (ids in hex). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
}

/** Counts down from 3 with one command a step, then answers. */
function countdown(request: RecordedRequest): ScriptedReply {
  const done = request.body.messages.filter((m) => m.role === 'tool').length;
  if (done < 3) return { toolCalls: [{ name: 'terminal', arguments: { command: `echo ${3 - done} >> countdown.txt` } }] };
  return { content: 'Liftoff.' };
}

let h: Harness;
let receiver: Server;
const spans: OtlpSpan[] = [];
const bodies: string[] = [];
let otlpUrl = '';
let metricsPort = 0;
let workerOutput: () => string = () => '';

before(async () => {
  // The OTLP/HTTP receiver: POST /v1/traces with an ExportTraceServiceRequest in JSON.
  const port = await freePort();
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      bodies.push(body);
      if (req.url === '/v1/traces') {
        const parsed = JSON.parse(body) as { resourceSpans?: { scopeSpans?: { spans?: OtlpSpan[] }[] }[] };
        for (const rs of parsed.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(port, '127.0.0.1', resolve));
  otlpUrl = `http://127.0.0.1:${port}`;
  metricsPort = await freePort();
  h = await startHarness({ name: 'telemetry', script: countdown });
  const worker = await h.startWorker(
    { OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'faheem-test' },
    ['--metrics-port', String(metricsPort)],
  );
  workerOutput = worker.output;
});
after(async () => {
  await h?.close();
  receiver?.close();
});

const attr = (span: OtlpSpan | undefined, key: string): unknown => {
  const v = span?.attributes?.find((a) => a.key === key)?.value;
  if (!v) return undefined;
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('arrayValue' in v) return ((v.arrayValue as { values?: { stringValue?: string }[] }).values ?? []).map((x) => x.stringValue);
  return Object.values(v)[0];
};

test('a start is one trace: CLI → workflow → activities → chat / execute_tool spans with gen_ai.* attributes; no key, no content', async () => {
  const workspace = await h.workspace();
  const secretMessage = 'count down from three, secret-marker-7c1e';
  const r = await execa('node', [path.join(ROOT, 'bin/faheem.js'), 'start', secretMessage, '--workspace', workspace, '--wait'], {
    cwd: ROOT,
    env: { ...h.env, OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' },
    reject: false,
  });
  assert.equal(r.exitCode, 0, r.stderr);
  const id = r.stdout.trim().split('\n')[0] ?? '';
  // Temporal's workflow span covers the run: it ends, and is exported, when the run does.
  const closed = await execa('node', [path.join(ROOT, 'bin/faheem.js'), 'close', id], { cwd: ROOT, env: h.env, reject: false });
  assert.equal(closed.exitCode, 0, closed.stderr);

  const chats = await waitFor(
    'three tool spans and four chat spans',
    () => {
      const chat = spans.filter((s) => s.name === 'chat gpt-4o-mini' && attr(s, 'gen_ai.conversation.id') === id);
      const tools = spans.filter((s) => s.name === 'execute_tool terminal' && attr(s, 'gen_ai.conversation.id') === id);
      const ends = ['StartWorkflow:conversation', 'RunWorkflow:conversation'].every((n) => spans.some((s) => s.name === n));
      return chat.length >= 4 && tools.length >= 3 && ends ? chat : undefined;
    },
    60_000,
  );
  const chat = chats[0];
  assert.equal(attr(chat, 'gen_ai.operation.name'), 'chat');
  assert.equal(attr(chat, 'gen_ai.provider.name'), 'openai');
  assert.equal(attr(chat, 'gen_ai.request.model'), 'gpt-4o-mini');
  assert.ok(Number(attr(chat, 'gen_ai.usage.input_tokens')) > 0, 'input tokens');
  assert.ok(Number(attr(chat, 'gen_ai.usage.output_tokens')) > 0, 'output tokens');
  assert.notEqual(attr(chat, 'gen_ai.usage.cache_read.input_tokens'), undefined);
  assert.deepEqual(attr(chat, 'gen_ai.response.finish_reasons'), ['tool_calls']);
  assert.ok(
    chats.some((s) => (attr(s, 'gen_ai.response.finish_reasons') as string[])[0] === 'stop'),
    'the last reply stopped',
  );
  const tool = spans.find((s) => s.name === 'execute_tool terminal' && attr(s, 'gen_ai.conversation.id') === id);
  assert.equal(attr(tool, 'gen_ai.tool.name'), 'terminal');
  assert.ok(String(attr(tool, 'gen_ai.tool.call.id')).length > 0);

  // Parent–child: chat → RunActivity:callModel → StartActivity:callModel → RunWorkflow → the CLI's StartWorkflow.
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const chain = (s: OtlpSpan | undefined): string[] => {
    const names: string[] = [];
    for (let cur = s; cur; cur = cur.parentSpanId ? byId.get(cur.parentSpanId) : undefined) names.push(cur.name);
    return names;
  };
  const chatChain = chain(chat);
  assert.deepEqual(chatChain.slice(0, 3), ['chat gpt-4o-mini', 'RunActivity:callModel', 'StartActivity:callModel'], chatChain.join(' <- '));
  assert.ok(chatChain.includes('RunWorkflow:conversation'), chatChain.join(' <- '));
  assert.equal(chatChain[chatChain.length - 1], 'StartWorkflow:conversation', chatChain.join(' <- '));
  const toolChain = chain(tool);
  assert.deepEqual(
    toolChain.slice(0, 3),
    ['execute_tool terminal', 'RunActivity:runTool', 'StartActivity:runTool'],
    toolChain.join(' <- '),
  );
  assert.equal(toolChain[toolChain.length - 1], 'StartWorkflow:conversation');
  assert.equal(new Set([...chats, tool].map((s) => s?.traceId)).size, 1, 'one trace');

  // Keys never; message content only when asked for (it was not).
  const all = bodies.join('\n');
  assert.ok(!all.includes(FAKE_KEY), 'no key in any exported span');
  const leaking = spans
    .filter((s) => JSON.stringify(s).includes('secret-marker-7c1e'))
    .map((s) => `${s.name}: ${JSON.stringify(s.attributes)}`);
  assert.ok(!all.includes('secret-marker-7c1e'), `no message content (in ${leaking.join('; ') || 'a non-span body'})`);
  assert.ok(!all.includes('countdown.txt'), 'no tool arguments');
});

test('/metrics after the countdown: model calls, tokens by type, cost, tool calls by outcome, step durations, and Temporal worker metrics', async () => {
  const text = await waitFor('metrics with our counters', async () => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    const body = await res.text();
    return body.includes('faheem_tool_calls_total') && body.includes('faheem_step_duration_seconds') ? body : undefined;
  });
  // Metrics listen on loopback only (unless --metrics-host says otherwise): this machine's other
  // addresses refuse the connection.
  assert.ok(workerOutput().includes(`metrics at http://127.0.0.1:${metricsPort}/metrics`), workerOutput());
  const outside = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal);
  if (outside) {
    const refused = await fetch(`http://${outside.address}:${metricsPort}/metrics`).then(
      () => false,
      () => true,
    );
    assert.ok(refused, `metrics answered on ${outside.address}`);
  }
  const value = (pattern: RegExp): number => {
    const line = text.split('\n').find((l) => pattern.test(l) && !l.startsWith('#'));
    return line ? Number(line.trim().split(/\s+/).pop()) : NaN;
  };
  assert.ok(value(/^faheem_model_calls_total\{/) >= 4, 'model calls');
  assert.ok(value(/^faheem_tokens_total\{.*type="input"/) > 0, 'input tokens');
  assert.ok(value(/^faheem_tokens_total\{.*type="output"/) > 0, 'output tokens');
  assert.ok(
    value(/^faheem_tool_calls_total\{.*outcome="ok".*tool="terminal"|^faheem_tool_calls_total\{.*tool="terminal".*outcome="ok"/) >= 3,
    'tool calls',
  );
  assert.ok(value(/^faheem_cost_usd_total\{/) >= 0, 'cost');
  assert.ok(value(/^faheem_step_duration_seconds_count\{?/) >= 4, 'step durations');
  assert.ok(/^temporal_\w+/m.test(text), "Temporal's own worker metrics");
});
