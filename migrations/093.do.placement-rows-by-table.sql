-- place_order_groups takes a batch's rows grouped by table (ORD-13, ORD-17).
--
-- Migration 092 took the batch as one object per placement and, once the outcomes were known, gathered the placed
-- ones again with jsonb_agg: measured, a third of the statement's time went to copying the placements' JSON (each
-- about 6 KB) into that aggregate and walking it once per table. Now every row carries `n`, its placement's position
-- in `groups`, and each table's rows are read once, straight from the parameter; when every placement of the batch
-- is placed (the usual case) the events and the debits are handed on as they came.
--
-- p: {organization_id, environment, idempotency_key_ttl_hours,
--     groups    [{n, id, user_id, company_id, forms, filing_state, source, billing, request, total_cents,
--                 idempotency_key, min_balance_cents}]   one per placement, n = 1, 2, ... in order;
--                                                         forms: the placement forms company_id (a row in companies)
--     companies [{n, id, slug, <companies columns>}]     the companies formed
--     orders    [{n, id, group_id, <orders columns>}]
--     history   [{n, id, order_id, actor}]               one `submitted` row per order
--     events    [{n, id, type, data}]                    in the order they are to be written
--     debits    [{n, <post_ledger_entries entry>}]       in the order they are to be posted}
--
-- Outcomes, the returned object and the 402 (SQLSTATE 'FC402', balance in cents as DETAIL) are those of 092:
--   "placed", "unknown_user", "slug_taken" or "earlier" per group, decided before anything of it is written;
--   returns {"outcomes": [...], "created_at": <timestamptz>}. The company admins, order groups, orders, history,
--   events with their deliveries (emit_events) and LAST the debits of the placed groups in one posting
--   (post_ledger_entries, BILL-17) are written in that order, so the balance row is locked the shortest.
CREATE OR REPLACE FUNCTION place_order_groups(p jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_org text := p ->> 'organization_id';
  v_env text := p ->> 'environment';
  v_outcomes jsonb;
  v_placed int[];
  v_all boolean;
  v_events jsonb;
  v_debits jsonb;
  v_min bigint;
  v_before bigint;
BEGIN
  IF EXISTS (SELECT 1 FROM jsonb_to_recordset(p -> 'groups') AS g(idempotency_key text) WHERE g.idempotency_key IS NOT NULL) THEN
    UPDATE order_groups g SET idempotency_key = NULL
     WHERE g.organization_id = v_org AND g.environment = v_env
       AND g.idempotency_key IN (SELECT x.idempotency_key FROM jsonb_to_recordset(p -> 'groups') AS x(idempotency_key text))
       AND g.created_at < now() - make_interval(hours => (p ->> 'idempotency_key_ttl_hours')::int);
  END IF;
  WITH checked AS (
    SELECT g.n, g.company_id, g.forms,
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
      FROM jsonb_to_recordset(p -> 'groups') AS g(n int, user_id text, company_id text, forms boolean, idempotency_key text)
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
     ORDER BY c.n
    ON CONFLICT ON CONSTRAINT companies_slug_unique DO NOTHING
    RETURNING companies.id
  ), outcome AS (
    SELECT k.n,
           coalesce(k.refused,
                    CASE WHEN k.forms AND NOT EXISTS (SELECT 1 FROM formed f WHERE f.id = k.company_id)
                         THEN 'slug_taken' ELSE 'placed' END) AS outcome
      FROM checked k
  )
  SELECT jsonb_agg(o.outcome ORDER BY o.n), coalesce(array_agg(o.n) FILTER (WHERE o.outcome = 'placed'), '{}')
    INTO v_outcomes, v_placed
    FROM outcome o;

  IF cardinality(v_placed) > 0 THEN
    v_all := cardinality(v_placed) = jsonb_array_length(p -> 'groups');
    INSERT INTO company_admins (company_id, user_id, organization_id, environment)
    SELECT g.company_id, g.user_id, v_org, v_env
      FROM jsonb_to_recordset(p -> 'groups') AS g(n int, company_id text, user_id text, forms boolean)
     WHERE g.forms AND g.n = ANY (v_placed)
    ON CONFLICT (company_id, user_id) DO NOTHING;
    INSERT INTO order_groups (id, organization_id, environment, user_id, company_id, filing_state, source, billing,
                              request, total_cents, idempotency_key)
    SELECT g.id, v_org, v_env, g.user_id, g.company_id, g.filing_state, g.source, g.billing, g.request, g.total_cents,
           g.idempotency_key
      FROM jsonb_to_recordset(p -> 'groups')
             AS g(n int, id text, user_id text, company_id text, filing_state text, source text, billing text,
                  request jsonb, total_cents bigint, idempotency_key text)
     WHERE g.n = ANY (v_placed);
    INSERT INTO orders (id, organization_id, environment, group_id, company_id, user_id, order_type, filing_state,
                        filing_status, filing_type, subscription_status, details, billing, amount_cents, retail_cents,
                        margin_cents, current_period_end)
    SELECT o.id, v_org, v_env, o.group_id, o.company_id, o.user_id, o.order_type, o.filing_state, 'submitted',
           o.filing_type, o.subscription_status, o.details, o.billing, o.amount_cents, o.retail_cents, o.margin_cents,
           CASE WHEN o.subscription_status IS NOT NULL
                THEN ((now() AT TIME ZONE 'UTC')::date + interval '1 year')::date END
      FROM jsonb_to_recordset(p -> 'orders')
             AS o(n int, id text, group_id text, company_id text, user_id text, order_type text, filing_state text,
                  filing_type text, subscription_status text, details jsonb, billing text, amount_cents bigint,
                  retail_cents bigint, margin_cents bigint)
     WHERE o.n = ANY (v_placed);
    INSERT INTO order_status_history (id, order_id, organization_id, environment, from_status, to_status, actor)
    SELECT h.id, h.order_id, v_org, v_env, NULL, 'submitted', h.actor
      FROM jsonb_to_recordset(p -> 'history') AS h(n int, id text, order_id text, actor text)
     WHERE h.n = ANY (v_placed);
    IF v_all THEN
      v_events := p -> 'events';
      v_debits := p -> 'debits';
    ELSE
      SELECT coalesce(jsonb_agg(e.v ORDER BY e.i), '[]'::jsonb) INTO v_events
        FROM jsonb_array_elements(p -> 'events') WITH ORDINALITY AS e(v, i)
       WHERE (e.v ->> 'n')::int = ANY (v_placed);
      SELECT coalesce(jsonb_agg(d.v ORDER BY d.i), '[]'::jsonb) INTO v_debits
        FROM jsonb_array_elements(p -> 'debits') WITH ORDINALITY AS d(v, i)
       WHERE (d.v ->> 'n')::int = ANY (v_placed);
    END IF;
    PERFORM emit_events(v_org, v_env, v_events);
    IF jsonb_array_length(v_debits) > 0 THEN
      SELECT sum(g.min_balance_cents) INTO v_min
        FROM jsonb_to_recordset(p -> 'groups') AS g(n int, min_balance_cents bigint)
       WHERE g.n = ANY (v_placed);
      SELECT e.balance_before INTO v_before
        FROM post_ledger_entries(v_org, v_env, v_debits, v_min) e
       WHERE e.id IS NULL;
      IF FOUND THEN
        RAISE EXCEPTION 'insufficient balance' USING ERRCODE = 'FC402', DETAIL = v_before::text;
      END IF;
    END IF;
  END IF;
  RETURN jsonb_build_object('outcomes', v_outcomes, 'created_at', now());
END
$$;
