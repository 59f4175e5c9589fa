import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readSettings } from '../../../src/environment.js';
import { telemetrySettings } from '../../../src/settings/telemetry.js';

test('the telemetry defaults: no traces, http/protobuf, service faheem, no content', () => {
  assert.deepEqual(telemetrySettings(readSettings({})), {
    tracing: false,
    protocol: 'http/protobuf',
    serviceName: 'faheem',
    captureContent: false,
  });
});

test('an endpoint turns traces on unless the exporter is none or the SDK is disabled', () => {
  const on = (env: Record<string, string>) => telemetrySettings(readSettings(env)).tracing;
  assert.equal(on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318' }), true);
  assert.equal(on({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://jaeger:4318/v1/traces' }), true);
  assert.equal(on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318', OTEL_TRACES_EXPORTER: 'otlp, none' }), false);
  assert.equal(on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318', OTEL_SDK_DISABLED: 'TRUE' }), false);
});

test('the protocol, the service name and content capture are read', () => {
  const t = telemetrySettings(
    readSettings({
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: ' agents ',
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'True',
    }),
  );
  assert.equal(t.protocol, 'http/json', 'the traces-only protocol wins');
  assert.equal(t.serviceName, 'agents');
  assert.equal(t.captureContent, true);
  assert.equal(telemetrySettings(readSettings({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).protocol, 'grpc');
  assert.equal(telemetrySettings(readSettings({ OTEL_EXPORTER_OTLP_PROTOCOL: 'thrift' })).protocol, 'http/protobuf');
});
