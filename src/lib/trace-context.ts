import {
  context,
  isSpanContextValid,
  type Link,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';

/*
 * Trace context carried across the database (OPS-31, OPS-32), through the OpenTelemetry API only. Without the SDK
 * (OTEL_EXPORTER_OTLP_ENDPOINT unset, src/instrumentation.ts) the API is a no-op: no span is ever active, so
 * `currentTraceparent` returns null, nothing is stored, and the spans started here are non-recording no-ops.
 */

/** The name of this service's tracer (spans it starts itself: webhook deliveries, jobs). */
const TRACER_NAME = 'filing-compliance-service';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The active span's context as a W3C `traceparent` value (`00-<trace id>-<span id>-<flags>`, 55 characters), or null
 * when no span is active (tracing off, or outside any request and job). Stored with events (OPS-31) and in job
 * payloads (OPS-32).
 */
export function currentTraceparent(): string | null {
  const span = trace.getActiveSpan();
  if (!span) return null;
  const sc = span.spanContext();
  if (!isSpanContextValid(sc)) return null;
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The span context a stored `traceparent` names (remote), or null for null or a malformed value. */
function parseTraceparent(value: string | null | undefined): SpanContext | null {
  const m = value ? TRACEPARENT.exec(value) : null;
  if (!m) return null;
  const sc: SpanContext = { traceId: m[1]!, spanId: m[2]!, traceFlags: Number.parseInt(m[3]!, 16), isRemote: true };
  return isSpanContextValid(sc) ? sc : null;
}

/**
 * The trace id and span id of the active span, for log lines (OPS-33): `{trace_id, span_id}`, or an empty object when
 * no span is active.
 */
export function logTraceFields(): { trace_id?: string; span_id?: string } {
  const sc = trace.getActiveSpan()?.spanContext();
  if (!sc || !isSpanContextValid(sc)) return {};
  return { trace_id: sc.traceId, span_id: sc.spanId };
}

/** What a span started by {@link inSpan} is: its name, kind, attributes, and the context it continues or links to. */
export interface SpanStart {
  name: string;
  kind?: SpanKind;
  attributes?: Record<string, string | number | boolean>;
  /** A stored `traceparent` the span continues (its parent): a job continues the trace of what queued it (OPS-32). */
  parent?: string | null;
  /** Stored `traceparent` values the span links to: a webhook delivery links to the request that wrote its event (OPS-31). */
  links?: Array<string | null | undefined>;
}

/**
 * Runs `fn` inside a new active span of this service's tracer and ends the span when `fn` settles; a thrown error is
 * recorded on the span (status ERROR) and rethrown. Without a parent the span starts a trace of its own (never the
 * caller's ambient context: a dispatcher's or worker's loop is no request). A no-op span when tracing is off.
 */
export function inSpan<T>(start: SpanStart, fn: (span: Span) => Promise<T>): Promise<T> {
  const parentContext = parseTraceparent(start.parent);
  const base = parentContext
    ? trace.setSpanContext(context.active(), parentContext)
    : trace.deleteSpan(context.active());
  const links: Link[] = [];
  for (const value of start.links ?? []) {
    const sc = parseTraceparent(value);
    if (sc) links.push({ context: sc });
  }
  return trace
    .getTracer(TRACER_NAME)
    .startActiveSpan(
      start.name,
      { kind: start.kind ?? SpanKind.INTERNAL, attributes: start.attributes, links },
      base,
      async (span) => {
        try {
          return await fn(span);
        } catch (err) {
          span.recordException(err as Error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
          throw err;
        } finally {
          span.end();
        }
      },
    );
}

/** The key of a job payload that carries the `traceparent` of what queued the job (OPS-32). */
export const JOB_TRACEPARENT_KEY = '_traceparent';

/**
 * Whether tracing is on for this environment (OPS-30): an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT, or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT for traces alone) and OTEL_SDK_DISABLED is not `true`.
 */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** Where src/lib/tracing-sdk.ts keeps the started SDK for {@link flushTracing}. */
export const TRACING_SDK_KEY = Symbol.for('filing-compliance-service.tracing-sdk');

/**
 * Sends the spans still buffered and stops the SDK, when tracing is on (a stopping process calls it last, OPS-30).
 * Never throws: a collector that cannot be reached costs the spans, not the stop.
 */
export async function flushTracing(): Promise<void> {
  const sdk = (globalThis as Record<symbol, { shutdown(): Promise<void> } | undefined>)[TRACING_SDK_KEY];
  await sdk?.shutdown().catch(() => undefined);
}
