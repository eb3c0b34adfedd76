-- emit_events_of_tenants(p_tenants): THE way events are written (EVT-5), for one tenant (emit_events) or several at
-- once (a placement statement of several tenants, ORD-40). p_tenants: a JSON array of objects {organization_id,
-- environment, events}, read by name; `events` is the tenant's array of {id, type, data, traceparent} (other keys are
-- ignored, so the placement statement passes its events on with their placement's `n`; a missing `traceparent` is
-- NULL: the W3C trace context of the request that wrote the event, stored for its webhook deliveries' spans, OPS-31).
-- Writes the events in the order given and one webhook delivery, due now, per (event, enabled endpoint of the event's
-- tenant subscribed to its type): the outbox the dispatchers claim from. Returns each event's id and created_at.
-- Planned once per connection (generic plans, ORD-13), without JIT compilation, as place_order_groups_of_tenants.
CREATE OR REPLACE FUNCTION emit_events_of_tenants(p_tenants jsonb)
RETURNS TABLE (id text, created_at timestamptz)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan SET jit = off
AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    WITH ev AS (
      INSERT INTO events (id, organization_id, environment, type, data, traceparent)
      SELECT e.id, t.organization_id, t.environment, e.type, e.data, e.traceparent
        FROM jsonb_to_recordset(p_tenants) AS t(organization_id text, environment text, events jsonb)
       CROSS JOIN LATERAL jsonb_to_recordset(t.events) AS e(id text, type text, data jsonb, traceparent text)
      RETURNING events.id, events.organization_id, events.environment, events.type, events.created_at
    ), deliveries AS (
      INSERT INTO webhook_deliveries (id, organization_id, environment, endpoint_id, event_id, next_attempt_at)
      SELECT new_id('wd'), ev.organization_id, ev.environment, w.id, ev.id, now()
        FROM ev JOIN webhook_endpoints w
          ON w.organization_id = ev.organization_id AND w.environment = ev.environment AND w.deleted_at IS NULL
             AND NOT w.disabled AND ev.type = ANY(w.event_types)
    )
    SELECT ev.id, ev.created_at FROM ev;
END
$$;
