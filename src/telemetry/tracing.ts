// OpenTelemetry traces over OTLP, for workers and clients. Configured by the standard OTEL_*
// variables; with no OTLP endpoint set nothing here is loaded (the SDK is imported on demand), and
// our spans (telemetry/instrument.ts) go to the API's no-op tracer. Temporal's own spans come from
// @temporalio/interceptors-opentelemetry: client, activity and — through the traced workflow bundle —
// workflow interceptors, so a start or a resume is one trace down to the activities and our spans.
import type { ClientInterceptors } from '@temporalio/client';
import type { InjectedSinks, WorkerInterceptors } from '@temporalio/worker';
import type { TelemetrySettings, TracesProtocol } from '../settings/telemetry.js';

/** Tracing, started: what a worker or client adds, and how to flush it. */
export interface Tracing {
  /** For `Worker.create`: activity interceptors (workflow ones are in the traced bundle). */
  workerInterceptors: WorkerInterceptors;
  /** For `Worker.create`: the sink that exports the workflow's spans. */
  sinks: InjectedSinks<Record<string, never>>;
  /** For `new Client`: the client interceptor (starts, signals, updates carry the trace). */
  clientInterceptors: ClientInterceptors;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

let started: Promise<Tracing | undefined> | undefined;

/** Exports what is buffered and stops tracing (a short-lived process, e.g. a CLI command, calls it before exiting). */
export async function shutdownTracing(): Promise<void> {
  const t = await started;
  started = undefined;
  await t?.shutdown();
}

/**
 * Starts tracing once per process when it is configured (`telemetry.tracing`), else resolves to
 * undefined having loaded nothing. Registers the global tracer provider (W3C trace context).
 */
export function startTracing(telemetry: TelemetrySettings): Promise<Tracing | undefined> {
  if (!telemetry.tracing) return Promise.resolve(undefined);
  started ??= load(telemetry);
  return started;
}

async function load(telemetry: TelemetrySettings): Promise<Tracing> {
  const [{ NodeSDK, resources, tracing }, otel] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@temporalio/interceptors-opentelemetry'),
  ]);
  const exporter = await tracesExporter(telemetry.protocol);
  const processor = new tracing.BatchSpanProcessor(exporter, { scheduledDelayMillis: 500 });
  const resource = resources.resourceFromAttributes({ 'service.name': telemetry.serviceName });
  // Traces only: Prometheus serves the metrics (`--metrics-port`), and logs stay where they are.
  // No process detector: it would put the command line (a CLI message, a flag's value) on every span.
  const sdk = new NodeSDK({
    resource,
    resourceDetectors: [resources.envDetector, resources.hostDetector, resources.osDetector],
    spanProcessors: [processor],
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  // The workflow's spans arrive through a sink, built by the interceptors' OpenTelemetry 1.x; the
  // exporter reads the 2.x names (parentSpanContext, instrumentationScope).
  const workflowProcessor = {
    onStart: () => undefined,
    onEnd: (span: Parameters<typeof processor.onEnd>[0]) => processor.onEnd(asCurrentSpan(withoutPrivateInfo(span))),
    forceFlush: () => processor.forceFlush(),
    shutdown: () => processor.shutdown(),
  };
  return {
    workerInterceptors: {
      activity: [
        (ctx) => ({
          inbound: new otel.OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new otel.OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
    sinks: { exporter: otel.makeWorkflowExporter(workflowProcessor as never, resource as never) } as never,
    clientInterceptors: { workflow: [new otel.OpenTelemetryWorkflowClientInterceptor()] },
    shutdown: () => sdk.shutdown(),
  };
}

async function tracesExporter(protocol: TracesProtocol) {
  // Each reads its endpoint, headers and timeout from the OTEL_EXPORTER_OTLP_* variables.
  if (protocol === 'grpc') return new (await import('@opentelemetry/exporter-trace-otlp-grpc')).OTLPTraceExporter();
  if (protocol === 'http/json') return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
  return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
}

/**
 * The WorkflowInfo fields that may hold a conversation's content: the memo (its title, the first
 * message, and its workspace) and a previous run's result or failure. Temporal's workflow exporter
 * copies the whole WorkflowInfo into every workflow span's attributes; message content goes into
 * spans only when OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT asks for it, so these never do.
 */
export const PRIVATE_INFO_ATTRIBUTES = ['memo', 'lastResult', 'lastFailure'] as const;

/** The span with the {@link PRIVATE_INFO_ATTRIBUTES} removed from its attributes (in place). */
export function withoutPrivateInfo<T extends object>(span: T): T {
  const attributes = (span as { attributes?: Record<string, unknown> }).attributes;
  if (attributes) for (const key of PRIVATE_INFO_ATTRIBUTES) delete attributes[key];
  return span;
}

/** A span in OpenTelemetry 1.x's shape, given the 2.x names the exporter reads (its parent kept). */
export function asCurrentSpan<T extends object>(span: T): T {
  const s = span as T & {
    parentSpanId?: string;
    parentSpanContext?: unknown;
    instrumentationLibrary?: unknown;
    instrumentationScope?: unknown;
    spanContext(): { traceId: string; traceFlags: number };
  };
  const extra: Record<string, unknown> = {};
  if (s.parentSpanContext === undefined && s.parentSpanId) {
    extra.parentSpanContext = {
      traceId: s.spanContext().traceId,
      spanId: s.parentSpanId,
      traceFlags: s.spanContext().traceFlags,
      isRemote: false,
    };
  }
  if (s.instrumentationScope === undefined) extra.instrumentationScope = s.instrumentationLibrary ?? { name: 'temporal' };
  return Object.keys(extra).length === 0 ? span : Object.assign(Object.create(Object.getPrototypeOf(span) as object) as T, span, extra);
}
