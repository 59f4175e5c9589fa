// The telemetry area of the settings: OpenTelemetry traces over OTLP (the standard OTEL_*
// variables) and whether model spans carry message content. Built once at an entry point and
// passed down. No zod here (the quick paths load it). The exporter's other OTEL_EXPORTER_OTLP_*
// settings (headers, timeout) are read by OpenTelemetry itself.
import type { Settings } from '../environment.js';

/** The OTLP protocols of traces. */
export type TracesProtocol = 'http/protobuf' | 'http/json' | 'grpc';

/** The telemetry settings. */
export interface TelemetrySettings {
  /**
   * Whether traces are exported: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT is
   * set, OTEL_TRACES_EXPORTER does not list `none` and OTEL_SDK_DISABLED is not `true`.
   */
  readonly tracing: boolean;
  /** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL; default `http/protobuf`. */
  readonly protocol: TracesProtocol;
  /** OTEL_SERVICE_NAME, default `faheem`. */
  readonly serviceName: string;
  /** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=`true`: model spans carry the messages. */
  readonly captureContent: boolean;
}

/** The telemetry settings `settings` gives, defaults applied (a blank value is unset). */
export function telemetrySettings(settings: Settings): TelemetrySettings {
  const endpoint = (settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || settings.OTEL_EXPORTER_OTLP_ENDPOINT || '').trim();
  const exporters = (settings.OTEL_TRACES_EXPORTER ?? '').split(',').map((s) => s.trim());
  const disabled = (settings.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true';
  const protocol = (settings.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || settings.OTEL_EXPORTER_OTLP_PROTOCOL || '').trim();
  return {
    tracing: endpoint !== '' && !exporters.includes('none') && !disabled,
    protocol: protocol === 'http/json' || protocol === 'grpc' ? protocol : 'http/protobuf',
    serviceName: settings.OTEL_SERVICE_NAME?.trim() || 'faheem',
    captureContent: (settings.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT ?? '').trim().toLowerCase() === 'true',
  };
}
