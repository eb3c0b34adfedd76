import { FastifyOtelInstrumentation } from '@fastify/otel';
import { NodeSDK, type NodeSDKConfiguration } from '@opentelemetry/sdk-node';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { TRACING_SDK_KEY } from './trace-context.js';

/*
 * The OpenTelemetry SDK (OPS-30). Loaded only by src/instrumentation.ts when OTEL_EXPORTER_OTLP_ENDPOINT is set, before
 * the application's modules, so the instrumented libraries are patched as they load; never imported by the
 * application itself (which speaks only to the no-op-by-default API, src/lib/trace-context.ts).
 */

/** Probes answered many times a minute by every process: no span of their own. */
const PROBE_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

const isProbe = (url: string | undefined): boolean => PROBE_PATHS.has((url ?? '').split('?')[0]!);

/**
 * The instrumentations this service is traced with: incoming HTTP (the server span, W3C context from the caller),
 * Fastify (route and hook spans), pg (queries, only inside a trace: the dispatcher's and graphile-worker's polls
 * would otherwise be a trace each) and undici (outgoing requests: webhook attempts, payment and mail providers).
 */
function tracingInstrumentations(): NonNullable<NodeSDKConfiguration['instrumentations']> {
  return [
    new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => isProbe(req.url) }),
    new FastifyOtelInstrumentation({ registerOnInitialization: true, ignorePaths: (opts) => isProbe(opts.url) }),
    new PgInstrumentation({ requireParentSpan: true }),
    new UndiciInstrumentation({ requireParentforSpans: true }),
  ];
}

/**
 * Starts the SDK: the exporter, sampler, resource and propagators come from the standard OTEL_* variables
 * (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME,
 * OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER, ...); the service name defaults to `filing-compliance-service`.
 * `overrides` replace any of it (tests pass an in-memory exporter). Only traces are sent unless asked otherwise:
 * metrics stay with Prometheus (METRICS_PORT) and logs with stdout, so OTEL_METRICS_EXPORTER and OTEL_LOGS_EXPORTER
 * default to `none` here (the SDK's own default would export both over OTLP). The SDK is kept where `flushTracing`
 * finds it, so a stopping process sends its last spans.
 * @returns the started SDK.
 */
export function startTracing(overrides: Partial<NodeSDKConfiguration> = {}): NodeSDK {
  process.env.OTEL_METRICS_EXPORTER ||= 'none';
  process.env.OTEL_LOGS_EXPORTER ||= 'none';
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME || 'filing-compliance-service',
    instrumentations: tracingInstrumentations(),
    ...overrides,
  });
  sdk.start();
  (globalThis as Record<symbol, unknown>)[TRACING_SDK_KEY] = sdk;
  return sdk;
}
