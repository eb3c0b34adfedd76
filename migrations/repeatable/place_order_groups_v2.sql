-- place_order_groups_v2(p): THE placement writer (ORD-13, ORD-17): any number of one tenant's placements, planned in
-- full by the application (ids, amounts, rows, event data, ledger lines; src/modules/orders/placements.repo.ts
-- `placementsPayload`), written by one statement.
--
-- p: {organization_id, environment, idempotency_key_ttl_hours, groups, companies, orders, events, debits}, each list a
-- JSON array of objects read by name (jsonb_to_recordset with the columns named below; a key the function does not
-- name is ignored, a key left out is NULL). Every row carries `n`, the placement it belongs to (1, 2, ... in the order
-- of `groups`):
--   groups     {n, id, user_id, company_id, forms, filing_state, source, billing, request, total_cents,
--               idempotency_key, min_balance_cents, actor}          one per placement; forms: the placement forms
--                                                                   company_id (a row of `companies` below)
--   companies  {n, id, slug, legal_name, trade_name, ein, entity_type, structure_type, tax_election, fiscal_end_month,
--               formation_date, formation_state, principal_address, mailing_address, officers}
--   orders     {n, id, history_id, order_type, filing_type, subscription_status, details, amount_cents, retail_cents,
--               margin_cents, tax_id_sealed}                        an order's group, company, user, filing state and
--                                                                   billing are its group's (ORD-4); history_id: its
--                                                                   `submitted` history row; tax_id_sealed: an EIN
--                                                                   order's sealed tax id (ORD-EIN-6), else null
--   events     {n, id, type, data}                                  emit_events' rows, in the order to be written
--   debits     {n, type, amount_cents, line_type, description, order_id, reverses_entry_id, created_by}
--                                                                   post_ledger_entries' rows, in posting order
--
-- Each placement's outcome is decided before anything of it is written: "unknown_user" (its user is not the tenant's,
-- ORD-16), "earlier" (an order group of the tenant has its Idempotency-Key already, IDEM-5; a key older than
-- idempotency_key_ttl_hours is freed first), "slug_taken" (the formed company's slug exists in the tenant, ORD-15) or
-- "placed". One statement then writes the placed ones' companies, admin links, order groups, orders with their
-- `submitted` history rows and sealed tax ids; then their events with their deliveries (emit_events, EVT-5); and LAST
-- their debits in one posting checked against the sum of their min_balance_cents (post_ledger_entries, BILL-17), so the
-- balance row is locked the shortest. When the balance cannot cover it, it raises SQLSTATE 'FC402' with the balance
-- (cents) as DETAIL, and the statement, with the caller's transaction, writes nothing.
--
-- Returns {"outcomes": [...one per group...], "created_at": <timestamptz>, "deliveries": <bool>, "streams": <bool>}:
-- whether the statement wrote webhook deliveries and whether the tenant has an event stream open
-- (event_stream_tenants), both false when nothing was placed, so the caller wakes only what listens (OPS-6).
--
-- Planned once per connection (generic plans, ORD-13): every inner statement reads the parameter's rows or one row by
-- its key, whatever the values.
CREATE OR REPLACE FUNCTION place_order_groups_v2(p jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_org text := p ->> 'organization_id';
  v_env text := p ->> 'environment';
  v_outcomes jsonb;
  v_placed int[];
  v_min bigint;
  v_events jsonb;
  v_debits jsonb;
  v_before bigint;
  v_deliveries boolean;
  v_streams boolean;
BEGIN
  IF EXISTS (SELECT 1 FROM jsonb_to_recordset(p -> 'groups') AS g(idempotency_key text)
              WHERE g.idempotency_key IS NOT NULL) THEN
    UPDATE order_groups g SET idempotency_key = NULL
     WHERE g.organization_id = v_org AND g.environment = v_env
       AND g.idempotency_key IN (SELECT x.idempotency_key
                                   FROM jsonb_to_recordset(p -> 'groups') AS x(idempotency_key text))
       AND g.created_at < now() - make_interval(hours => (p ->> 'idempotency_key_ttl_hours')::int);
  END IF;
  WITH grp AS MATERIALIZED (
    SELECT g.* FROM jsonb_to_recordset(p -> 'groups')
                      AS g(n int, id text, user_id text, company_id text, forms boolean, filing_state text,
                           source text, billing text, request jsonb, total_cents bigint, idempotency_key text,
                           min_balance_cents bigint, actor text)
  ), checked AS (
    SELECT g.*,
           CASE
             WHEN NOT EXISTS (SELECT 1 FROM users u
                               WHERE u.id = g.user_id AND u.organization_id = v_org AND u.environment = v_env)
               THEN 'unknown_user'
             WHEN g.idempotency_key IS NOT NULL
                  AND EXISTS (SELECT 1 FROM order_groups o
                               WHERE o.organization_id = v_org AND o.environment = v_env
                                 AND o.idempotency_key = g.idempotency_key)
               THEN 'earlier'
           END AS refused
      FROM grp g
  ), formed AS (
    INSERT INTO companies (id, organization_id, environment, slug, legal_name, trade_name, ein, entity_type,
                           structure_type, tax_election, fiscal_end_month, formation_date, formation_state,
                           principal_address, mailing_address, officers)
    SELECT c.id, v_org, v_env, c.slug, c.legal_name, c.trade_name, c.ein, c.entity_type, c.structure_type,
           c.tax_election, c.fiscal_end_month, c.formation_date, c.formation_state, c.principal_address,
           c.mailing_address, c.officers
      FROM jsonb_to_recordset(p -> 'companies')
             AS c(n int, id text, slug text, legal_name text, trade_name text, ein text, entity_type text,
                  structure_type text, tax_election text, fiscal_end_month text, formation_date date,
                  formation_state text, principal_address jsonb, mailing_address jsonb, officers jsonb)
      JOIN checked k ON k.n = c.n AND k.refused IS NULL
     ORDER BY k.n
    ON CONFLICT ON CONSTRAINT companies_slug_unique DO NOTHING
    RETURNING companies.id
  ), outcome AS MATERIALIZED (
    SELECT k.*,
           coalesce(k.refused,
                    CASE WHEN k.forms AND NOT EXISTS (SELECT 1 FROM formed f WHERE f.id = k.company_id)
                         THEN 'slug_taken' ELSE 'placed' END) AS outcome
      FROM checked k
  ), placed AS MATERIALIZED (
    SELECT o.* FROM outcome o WHERE o.outcome = 'placed'
  ), ord AS MATERIALIZED (
    SELECT o.*, g.id AS group_id, g.company_id, g.user_id, g.filing_state, g.billing, g.actor
      FROM jsonb_to_recordset(p -> 'orders')
             AS o(n int, id text, history_id text, order_type text, filing_type text, subscription_status text,
                  details jsonb, amount_cents bigint, retail_cents bigint, margin_cents bigint, tax_id_sealed text)
      JOIN placed g ON g.n = o.n
  ), admins_written AS (
    INSERT INTO company_admins (company_id, user_id, organization_id, environment)
    SELECT g.company_id, g.user_id, v_org, v_env FROM placed g WHERE g.forms
    ON CONFLICT (company_id, user_id) DO NOTHING
  ), groups_written AS (
    INSERT INTO order_groups (id, organization_id, environment, user_id, company_id, filing_state, source, billing,
                              request, total_cents, idempotency_key)
    SELECT g.id, v_org, v_env, g.user_id, g.company_id, g.filing_state, g.source, g.billing, g.request, g.total_cents,
           g.idempotency_key
      FROM placed g
  ), orders_written AS (
    INSERT INTO orders (id, organization_id, environment, group_id, company_id, user_id, order_type, filing_state,
                        filing_status, filing_type, subscription_status, details, billing, amount_cents, retail_cents,
                        margin_cents, current_period_end)
    SELECT o.id, v_org, v_env, o.group_id, o.company_id, o.user_id, o.order_type, o.filing_state, 'submitted',
           o.filing_type, o.subscription_status, o.details, o.billing, o.amount_cents, o.retail_cents, o.margin_cents,
           -- CAL-35: an annual report paid for several years renews after the last of them.
           CASE WHEN o.subscription_status IS NOT NULL
                THEN ((now() AT TIME ZONE 'UTC')::date
                      + make_interval(years => COALESCE((o.details ->> 'years')::int, 1)))::date END
      FROM ord o
  ), history_written AS (
    INSERT INTO order_status_history (id, order_id, organization_id, environment, from_status, to_status, actor)
    SELECT o.history_id, o.id, v_org, v_env, NULL, 'submitted', o.actor
      FROM ord o
  ), tax_ids_written AS (
    INSERT INTO ein_tax_ids (order_id, organization_id, environment, sealed)
    SELECT o.id, v_org, v_env, o.tax_id_sealed
      FROM ord o WHERE o.tax_id_sealed IS NOT NULL
  )
  SELECT jsonb_agg(o.outcome ORDER BY o.n), coalesce(array_agg(o.n) FILTER (WHERE o.outcome = 'placed'), '{}'),
         sum(o.min_balance_cents) FILTER (WHERE o.outcome = 'placed'),
         -- emit_events' test for a delivery, asked once for the event types of the whole batch (a placement not placed
         -- writes none, and its events are of the types of the others'): at worst a wake-up nobody needed.
         EXISTS (SELECT 1 FROM webhook_endpoints w
                  WHERE w.organization_id = v_org AND w.environment = v_env AND w.deleted_at IS NULL AND NOT w.disabled
                    AND w.event_types && ARRAY(SELECT e.type FROM jsonb_to_recordset(p -> 'events') AS e(type text))),
         EXISTS (SELECT 1 FROM event_stream_tenants s
                  WHERE s.organization_id = v_org AND s.environment = v_env AND s.expires_at > now())
    INTO v_outcomes, v_placed, v_min, v_deliveries, v_streams
    FROM outcome o;

  IF cardinality(v_placed) > 0 THEN
    IF cardinality(v_placed) = jsonb_array_length(p -> 'groups') THEN
      v_events := p -> 'events';
      v_debits := p -> 'debits';
    ELSE
      SELECT coalesce(jsonb_agg(e.r ORDER BY e.i), '[]'::jsonb) INTO v_events
        FROM jsonb_array_elements(p -> 'events') WITH ORDINALITY AS e(r, i)
       WHERE (e.r ->> 'n')::int = ANY (v_placed);
      SELECT coalesce(jsonb_agg(d.r ORDER BY d.i), '[]'::jsonb) INTO v_debits
        FROM jsonb_array_elements(p -> 'debits') WITH ORDINALITY AS d(r, i)
       WHERE (d.r ->> 'n')::int = ANY (v_placed);
    END IF;
    PERFORM emit_events(v_org, v_env, v_events);
    IF jsonb_array_length(v_debits) > 0 THEN
      SELECT e.balance_before INTO v_before
        FROM post_ledger_entries(v_org, v_env, v_debits, v_min) e
       WHERE e.id IS NULL;
      IF FOUND THEN
        RAISE EXCEPTION 'insufficient balance' USING ERRCODE = 'FC402', DETAIL = v_before::text;
      END IF;
    END IF;
  END IF;
  RETURN jsonb_build_object('outcomes', v_outcomes, 'created_at', now(),
                            'deliveries', cardinality(v_placed) > 0 AND v_deliveries,
                            'streams', cardinality(v_placed) > 0 AND v_streams);
END
$$;
