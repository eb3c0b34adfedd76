-- place_order_groups_of_tenants(p): THE placement writer (ORD-13, ORD-17, ORD-40): the placements of one tenant or of
-- several, planned in full by the application (ids, amounts, rows, event data, ledger lines;
-- src/modules/orders/placements.repo.ts `placementsPayload`), written by one statement, so one transaction and one
-- commit. One tenant's placements are an array of one element.
--
-- p: a JSON array with one element per tenant, {organization_id, environment, idempotency_key_ttl_hours, groups,
-- companies, orders, events, debits}, each list a JSON array of objects read by name (jsonb_to_recordset with the
-- columns named below; a key the function does not name is ignored, a key left out is NULL). Every row carries `n`, the
-- placement of its tenant it belongs to (1, 2, ... in the order of the tenant's `groups`):
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
--   events     {n, id, type, data, traceparent}                     emit_events_of_tenants' rows, in the order to be
--                                                                   written
--   debits     {n, type, amount_cents, line_type, description, order_id, reverses_entry_id, created_by}
--                                                                   post_ledger_entries_of_tenants' rows, in posting
--                                                                   order
--
-- Each placement's outcome is decided before anything of it is written: "unknown_user" (its user is not its tenant's,
-- ORD-16), "earlier" (an order group of the tenant has its Idempotency-Key already, IDEM-5; a key older than
-- idempotency_key_ttl_hours is freed first), "slug_taken" (the formed company's slug exists in the tenant, ORD-15) or
-- "placed". One statement then writes every tenant's placed companies, admin links, order groups, orders with their
-- `submitted` history rows and sealed tax ids (rows carry their tenant); then their events with their deliveries (one
-- emit_events_of_tenants, EVT-5); and LAST their debits in one posting per tenant, checked against the sum of the
-- tenant's min_balance_cents (one post_ledger_entries_of_tenants, BILL-17), so the balance rows are locked the
-- shortest, and in the order of (organization_id, environment): two statements of several tenants running at once
-- (two server processes) can make each other wait, never deadlock. When a balance cannot cover its tenant's part, it
-- raises SQLSTATE 'FC402' with that balance (cents) as DETAIL, and the statement, with the caller's transaction,
-- writes nothing for any tenant: the caller writes each tenant's placements again on their own to learn whose balance
-- is short.
--
-- Returns a JSON array with one answer per element of p, in the order of p: {"outcomes": [...one per group...],
-- "created_at": <timestamptz>, "deliveries": <bool>, "streams": <bool>}: whether the statement wrote webhook
-- deliveries for the tenant and whether the tenant has an event stream open (event_stream_tenants), both false when
-- nothing of the tenant was placed, so the caller wakes only what listens (OPS-6).
--
-- Planned once per connection (generic plans, ORD-13): every inner statement reads the parameter's rows or one row by
-- its key, whatever the values. Without JIT compilation: the planner reckons each jsonb_to_recordset at 100 rows, so
-- the generic plan of a set of tenants' sets of rows looks big enough to compile (jit_above_cost), which cost about
-- 600 M instructions per statement (`npm run bench:db-instructions`, PostgreSQL 15 with LLVM).
CREATE OR REPLACE FUNCTION place_order_groups_of_tenants(p jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan SET jit = off
AS $$
DECLARE
  v_answers jsonb;
  v_events jsonb;
  v_postings jsonb;
  v_before bigint;
BEGIN
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(p) AS t(payload)
                     CROSS JOIN LATERAL jsonb_to_recordset(t.payload -> 'groups') AS g(idempotency_key text)
              WHERE g.idempotency_key IS NOT NULL) THEN
    UPDATE order_groups g SET idempotency_key = NULL
      FROM (SELECT t.payload ->> 'organization_id' AS organization_id, t.payload ->> 'environment' AS environment,
                   (t.payload ->> 'idempotency_key_ttl_hours')::int AS ttl_hours, x.idempotency_key
              FROM jsonb_array_elements(p) AS t(payload)
             CROSS JOIN LATERAL jsonb_to_recordset(t.payload -> 'groups') AS x(idempotency_key text)
             WHERE x.idempotency_key IS NOT NULL) k
     WHERE g.organization_id = k.organization_id AND g.environment = k.environment
       AND g.idempotency_key = k.idempotency_key
       AND g.created_at < now() - make_interval(hours => k.ttl_hours);
  END IF;
  WITH tenant AS MATERIALIZED (
    SELECT t.i, t.payload, t.payload ->> 'organization_id' AS organization_id, t.payload ->> 'environment' AS environment
      FROM jsonb_array_elements(p) WITH ORDINALITY AS t(payload, i)
  ), grp AS MATERIALIZED (
    SELECT t.i, t.organization_id, t.environment, g.*
      FROM tenant t
     CROSS JOIN LATERAL jsonb_to_recordset(t.payload -> 'groups')
                          AS g(n int, id text, user_id text, company_id text, forms boolean, filing_state text,
                               source text, billing text, request jsonb, total_cents bigint, idempotency_key text,
                               min_balance_cents bigint, actor text)
  ), company AS MATERIALIZED (
    -- Each list is read once, into rows of its own: joined to the checked groups as the inner side of a nested loop, a
    -- function of the tenant's parameter would be read again for every group.
    SELECT t.i, c.*
      FROM tenant t
     CROSS JOIN LATERAL jsonb_to_recordset(t.payload -> 'companies')
             AS c(n int, id text, slug text, legal_name text, trade_name text, ein text, entity_type text,
                  structure_type text, tax_election text, fiscal_end_month text, formation_date date,
                  formation_state text, principal_address jsonb, mailing_address jsonb, officers jsonb)
  ), ord_row AS MATERIALIZED (
    SELECT t.i, o.*
      FROM tenant t
     CROSS JOIN LATERAL jsonb_to_recordset(t.payload -> 'orders')
             AS o(n int, id text, history_id text, order_type text, filing_type text, subscription_status text,
                  details jsonb, amount_cents bigint, retail_cents bigint, margin_cents bigint, tax_id_sealed text)
  ), checked AS (
    SELECT g.*,
           CASE
             WHEN NOT EXISTS (SELECT 1 FROM users u
                               WHERE u.id = g.user_id AND u.organization_id = g.organization_id
                                 AND u.environment = g.environment)
               THEN 'unknown_user'
             WHEN g.idempotency_key IS NOT NULL
                  AND EXISTS (SELECT 1 FROM order_groups o
                               WHERE o.organization_id = g.organization_id AND o.environment = g.environment
                                 AND o.idempotency_key = g.idempotency_key)
               THEN 'earlier'
           END AS refused
      FROM grp g
  ), formed AS (
    INSERT INTO companies (id, organization_id, environment, slug, legal_name, trade_name, ein, entity_type,
                           structure_type, tax_election, fiscal_end_month, formation_date, formation_state,
                           principal_address, mailing_address, officers)
    SELECT c.id, k.organization_id, k.environment, c.slug, c.legal_name, c.trade_name, c.ein, c.entity_type,
           c.structure_type, c.tax_election, c.fiscal_end_month, c.formation_date, c.formation_state,
           c.principal_address, c.mailing_address, c.officers
      FROM company c
      JOIN checked k ON k.i = c.i AND k.n = c.n AND k.refused IS NULL
     ORDER BY k.organization_id, k.environment, k.n
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
    SELECT o.*, g.organization_id, g.environment, g.id AS group_id, g.company_id, g.user_id, g.filing_state, g.billing,
           g.actor
      FROM ord_row o
      JOIN placed g ON g.i = o.i AND g.n = o.n
  ), admins_written AS (
    INSERT INTO company_admins (company_id, user_id, organization_id, environment)
    SELECT g.company_id, g.user_id, g.organization_id, g.environment FROM placed g WHERE g.forms
    ON CONFLICT (company_id, user_id) DO NOTHING
  ), groups_written AS (
    INSERT INTO order_groups (id, organization_id, environment, user_id, company_id, filing_state, source, billing,
                              request, total_cents, idempotency_key)
    SELECT g.id, g.organization_id, g.environment, g.user_id, g.company_id, g.filing_state, g.source, g.billing,
           g.request, g.total_cents, g.idempotency_key
      FROM placed g
  ), orders_written AS (
    INSERT INTO orders (id, organization_id, environment, group_id, company_id, user_id, order_type, filing_state,
                        filing_status, filing_type, subscription_status, details, billing, amount_cents, retail_cents,
                        margin_cents, current_period_end)
    SELECT o.id, o.organization_id, o.environment, o.group_id, o.company_id, o.user_id, o.order_type, o.filing_state,
           'submitted', o.filing_type, o.subscription_status, o.details, o.billing, o.amount_cents, o.retail_cents,
           o.margin_cents,
           -- CAL-35: an annual report paid for several years renews after the last of them.
           CASE WHEN o.subscription_status IS NOT NULL
                THEN ((now() AT TIME ZONE 'UTC')::date
                      + make_interval(years => COALESCE((o.details ->> 'years')::int, 1)))::date END
      FROM ord o
  ), history_written AS (
    INSERT INTO order_status_history (id, order_id, organization_id, environment, from_status, to_status, actor)
    SELECT o.history_id, o.id, o.organization_id, o.environment, NULL, 'submitted', o.actor
      FROM ord o
  ), tax_ids_written AS (
    INSERT INTO ein_tax_ids (order_id, organization_id, environment, sealed)
    SELECT o.id, o.organization_id, o.environment, o.tax_id_sealed
      FROM ord o WHERE o.tax_id_sealed IS NOT NULL
  ), answer AS MATERIALIZED (
    SELECT o.i, o.organization_id, o.environment,
           jsonb_agg(o.outcome ORDER BY o.n) AS outcomes,
           count(*) FILTER (WHERE o.outcome = 'placed') AS placed,
           count(*) AS placements,
           sum(o.min_balance_cents) FILTER (WHERE o.outcome = 'placed') AS min_balance_cents
      FROM outcome o
     GROUP BY o.i, o.organization_id, o.environment
  ), debits AS (
    -- A tenant's debits: as given when all of its placements are placed, else those of its placed ones.
    SELECT a.organization_id, a.environment, a.min_balance_cents,
           CASE WHEN a.placed = a.placements THEN t.payload -> 'debits'
                ELSE (SELECT coalesce(jsonb_agg(d.r ORDER BY d.k), '[]'::jsonb)
                        FROM jsonb_array_elements(t.payload -> 'debits') WITH ORDINALITY AS d(r, k)
                        JOIN placed g ON g.i = a.i AND g.n = (d.r ->> 'n')::int) END AS entries
      FROM answer a JOIN tenant t ON t.i = a.i
     WHERE a.placed > 0
  )
  SELECT (SELECT jsonb_agg(jsonb_build_object(
                   'outcomes', a.outcomes, 'created_at', now(),
                   -- emit_events_of_tenants' test for a delivery, asked once per tenant for the event types of its
                   -- placements (one not placed writes none, and its events are of the types of the others'): at
                   -- worst a wake-up nobody needed.
                   'deliveries', a.placed > 0
                                 AND EXISTS (SELECT 1 FROM webhook_endpoints w
                                              WHERE w.organization_id = a.organization_id
                                                AND w.environment = a.environment
                                                AND w.deleted_at IS NULL AND NOT w.disabled
                                                AND w.event_types && ARRAY(SELECT e.type
                                                                             FROM jsonb_to_recordset(t.payload -> 'events')
                                                                                    AS e(type text))),
                   'streams', a.placed > 0
                              AND EXISTS (SELECT 1 FROM event_stream_tenants s
                                           WHERE s.organization_id = a.organization_id
                                             AND s.environment = a.environment AND s.expires_at > now()))
                 ORDER BY a.i)
            FROM answer a JOIN tenant t ON t.i = a.i),
         -- p itself is emit_events_of_tenants' parameter ({organization_id, environment, events} per tenant, other
         -- keys ignored) when every placement is placed: the events' JSON is not built again. Else the placed ones'
         -- events, in order.
         CASE WHEN (SELECT bool_and(a.placed = a.placements) FROM answer a) THEN p
              ELSE (SELECT jsonb_agg(jsonb_build_object(
                                       'organization_id', a.organization_id, 'environment', a.environment,
                                       'events', (SELECT coalesce(jsonb_agg(e.r ORDER BY e.k), '[]'::jsonb)
                                                    FROM jsonb_array_elements(t.payload -> 'events')
                                                           WITH ORDINALITY AS e(r, k)
                                                    JOIN placed g ON g.i = a.i AND g.n = (e.r ->> 'n')::int)))
                      FROM answer a JOIN tenant t ON t.i = a.i
                     WHERE a.placed > 0) END,
         (SELECT jsonb_agg(to_jsonb(d) ORDER BY d.organization_id, d.environment)
            FROM debits d WHERE jsonb_array_length(d.entries) > 0)
    INTO v_answers, v_events, v_postings;

  IF v_events IS NOT NULL THEN
    PERFORM emit_events_of_tenants(v_events);
  END IF;
  IF v_postings IS NOT NULL THEN
    SELECT e.balance_before INTO v_before
      FROM post_ledger_entries_of_tenants(v_postings) e
     WHERE e.id IS NULL
     LIMIT 1;
    IF FOUND THEN
      RAISE EXCEPTION 'insufficient balance' USING ERRCODE = 'FC402', DETAIL = v_before::text;
    END IF;
  END IF;
  RETURN v_answers;
END
$$;
