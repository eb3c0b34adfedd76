-- The trace context of the request or job that wrote an event (OPS-31): its W3C `traceparent`
-- (00-<trace id>-<span id>-<flags>), so the webhook delivery of the event links its span to that request's trace.
-- NULL when tracing is off (OTEL_EXPORTER_OTLP_ENDPOINT unset) or the writer had no span (a database trigger, the
-- CLI). Written by emit_events (migrations/repeatable/emit_events.sql) from each event's `traceparent` key, and by the
-- test event's insert; never read by the API. A nullable column without a default: adding it rewrites nothing.
ALTER TABLE events ADD COLUMN traceparent text;
