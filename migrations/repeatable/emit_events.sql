-- emit_events(p_org, p_env, p_events): THE way events are written (EVT-5). p_events: a JSON array of the tenant's
-- events, each an object {id, type, data, traceparent} read by name (other keys are ignored, so the placement statement
-- passes its events on with their placement's `n`; a missing `traceparent` is NULL: the W3C trace context of the
-- request that wrote the event, stored for its webhook deliveries' spans, OPS-31). Writes the events in the order
-- given and one webhook delivery, due now, per (event, enabled endpoint of the tenant subscribed to its type): the
-- outbox the dispatchers claim from. Returns each event's id and created_at. Planned once per connection (generic plans, ORD-13).
CREATE OR REPLACE FUNCTION emit_events(p_org text, p_env text, p_events jsonb)
RETURNS TABLE (id text, created_at timestamptz)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    WITH ev AS (
      INSERT INTO events (id, organization_id, environment, type, data, traceparent)
      SELECT e.id, p_org, p_env, e.type, e.data, e.traceparent
        FROM jsonb_to_recordset(p_events) AS e(id text, type text, data jsonb, traceparent text)
      RETURNING events.id, events.type, events.created_at
    ), deliveries AS (
      INSERT INTO webhook_deliveries (id, organization_id, environment, endpoint_id, event_id, next_attempt_at)
      SELECT new_id('wd'), p_org, p_env, w.id, ev.id, now()
        FROM ev JOIN webhook_endpoints w
          ON w.organization_id = p_org AND w.environment = p_env AND w.deleted_at IS NULL AND NOT w.disabled
             AND ev.type = ANY(w.event_types)
    )
    SELECT ev.id, ev.created_at FROM ev;
END
$$;
