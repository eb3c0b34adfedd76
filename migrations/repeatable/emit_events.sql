-- emit_events(p_org, p_env, p_events): the events of ONE tenant, written by emit_events_of_tenants (EVT-5; see there
-- for p_events, the deliveries and what it returns). Planned once per connection (generic plans, ORD-13).
CREATE OR REPLACE FUNCTION emit_events(p_org text, p_env text, p_events jsonb)
RETURNS TABLE (id text, created_at timestamptz)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
  RETURN QUERY SELECT e.id, e.created_at
    FROM emit_events_of_tenants(jsonb_build_array(
           jsonb_build_object('organization_id', p_org, 'environment', p_env, 'events', p_events))) AS e;
END
$$;
