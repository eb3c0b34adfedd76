-- Placements written in batches (ORD-13, ORD-17): one statement writes any number of one tenant's placements.
--
-- place_order_groups replaces place_order_group as THE placement writer. The application plans every placement in
-- full (ids, amounts, rows, event data, ledger lines); a process that has several placements of one tenant waiting
-- sends them together (src/modules/orders/placement-batcher.ts), so the statement, its commit and the tenant's
-- balance lock are paid once per batch instead of once per order. A single placement is a batch of one.
--
-- p: {organization_id, environment, idempotency_key_ttl_hours, placements: [{user_id, actor, company (null or {id, slug, <company columns>}),
--      group {id, user_id, company_id, filing_state, source, billing, request, total_cents, idempotency_key},
--      orders [<orders columns>], history [{id, order_id}], events [{id, type, data}], debits [ledger entries],
--      min_balance_cents}]}
--
-- Every placement gets an outcome, decided before anything of it is written:
--   "placed"        written;
--   "unknown_user"  its user_id is not a user of the tenant (ORD-16): nothing of it written;
--   "slug_taken"    its formation company's slug exists in the tenant, or an earlier placement of the batch takes
--                   it: nothing of it written (the application picks the next free slug, ORD-15);
--   "earlier"       its Idempotency-Key placed an order group already (IDEM-5): nothing of it written. A key older
--                   than idempotency_key_ttl_hours is first given up (IDEM-7), so a reused expired key places anew.
-- Returns {"outcomes": [...], "created_at": <timestamptz>} in the order of p.placements.
--
-- Then, in the order that keeps the balance row locked the shortest: the companies and their admins, the order
-- groups, the orders and their `submitted` history, the events with their deliveries (emit_events), and LAST the
-- debits of every placed placement in one posting (post_ledger_entries, BILL-17), which checks the balance against
-- their sum. When the balance cannot cover the sum it raises SQLSTATE 'FC402' with the balance (cents) as DETAIL, so
-- the statement, and the caller's transaction, write nothing: the application then places that batch's placements
-- one at a time, and only those the balance cannot cover answer 402 (billing rule 2).
CREATE FUNCTION place_order_groups(p jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_org text := p ->> 'organization_id';
  v_env text := p ->> 'environment';
  v_outcomes jsonb;
  v_placed jsonb;
  v_debits jsonb;
  v_min bigint;
  v_before bigint;
BEGIN
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(p -> 'placements') AS x(v)
              WHERE x.v -> 'group' ->> 'idempotency_key' IS NOT NULL) THEN
    UPDATE order_groups g SET idempotency_key = NULL
     WHERE g.organization_id = v_org AND g.environment = v_env
       AND g.idempotency_key IN (SELECT x.v -> 'group' ->> 'idempotency_key'
                                   FROM jsonb_array_elements(p -> 'placements') AS x(v))
       AND g.created_at < now() - make_interval(hours => (p ->> 'idempotency_key_ttl_hours')::int);
  END IF;
  WITH pl AS (
    SELECT x.n, x.v, jsonb_typeof(x.v -> 'company') = 'object' AS forms
      FROM jsonb_array_elements(p -> 'placements') WITH ORDINALITY AS x(v, n)
  ), checked AS (
    SELECT pl.*,
           CASE
             WHEN NOT EXISTS (SELECT 1 FROM users u
                               WHERE u.id = pl.v ->> 'user_id' AND u.organization_id = v_org AND u.environment = v_env)
               THEN 'unknown_user'
             WHEN pl.v -> 'group' ->> 'idempotency_key' IS NOT NULL
                  AND EXISTS (SELECT 1 FROM order_groups g
                               WHERE g.organization_id = v_org AND g.environment = v_env
                                 AND g.idempotency_key = pl.v -> 'group' ->> 'idempotency_key')
               THEN 'earlier'
           END AS refused
      FROM pl
  ), formed AS (
    INSERT INTO companies (id, organization_id, environment, slug, legal_name, trade_name, ein, entity_type,
                           structure_type, tax_election, fiscal_end_month, formation_date, formation_state,
                           principal_address, mailing_address, officers)
    SELECT r.id, v_org, v_env, r.slug, r.legal_name, r.trade_name, r.ein, r.entity_type, r.structure_type,
           r.tax_election, r.fiscal_end_month, r.formation_date, r.formation_state, r.principal_address,
           r.mailing_address, r.officers
      FROM checked c, jsonb_populate_record(NULL::companies, c.v -> 'company') r
     WHERE c.refused IS NULL AND c.forms
     ORDER BY c.n
    ON CONFLICT ON CONSTRAINT companies_slug_unique DO NOTHING
    RETURNING companies.id
  ), outcome AS (
    SELECT c.n, c.v,
           coalesce(c.refused,
                    CASE WHEN c.forms AND NOT EXISTS (SELECT 1 FROM formed f WHERE f.id = c.v -> 'company' ->> 'id')
                         THEN 'slug_taken' ELSE 'placed' END) AS outcome
      FROM checked c
  )
  SELECT jsonb_agg(o.outcome ORDER BY o.n),
         coalesce(jsonb_agg(o.v ORDER BY o.n) FILTER (WHERE o.outcome = 'placed'), '[]'::jsonb)
    INTO v_outcomes, v_placed
    FROM outcome o;

  IF jsonb_array_length(v_placed) > 0 THEN
    INSERT INTO company_admins (company_id, user_id, organization_id, environment)
    SELECT x.v -> 'company' ->> 'id', x.v ->> 'user_id', v_org, v_env
      FROM jsonb_array_elements(v_placed) AS x(v)
     WHERE jsonb_typeof(x.v -> 'company') = 'object'
    ON CONFLICT (company_id, user_id) DO NOTHING;
    INSERT INTO order_groups (id, organization_id, environment, user_id, company_id, filing_state, source, billing,
                              request, total_cents, idempotency_key)
    SELECT g.id, v_org, v_env, g.user_id, g.company_id, g.filing_state, g.source, g.billing, g.request, g.total_cents,
           g.idempotency_key
      FROM jsonb_array_elements(v_placed) AS x(v), jsonb_populate_record(NULL::order_groups, x.v -> 'group') g;
    INSERT INTO orders (id, organization_id, environment, group_id, company_id, user_id, order_type, filing_state,
                        filing_status, filing_type, subscription_status, details, billing, amount_cents, retail_cents,
                        margin_cents, current_period_end)
    SELECT o.id, v_org, v_env, x.v -> 'group' ->> 'id', o.company_id, o.user_id, o.order_type, o.filing_state,
           'submitted', o.filing_type, o.subscription_status, o.details, o.billing, o.amount_cents, o.retail_cents,
           o.margin_cents,
           CASE WHEN o.subscription_status IS NOT NULL
                THEN ((now() AT TIME ZONE 'UTC')::date + interval '1 year')::date END
      FROM jsonb_array_elements(v_placed) AS x(v), jsonb_populate_recordset(NULL::orders, x.v -> 'orders') o;
    INSERT INTO order_status_history (id, order_id, organization_id, environment, from_status, to_status, actor)
    SELECT h.id, h.order_id, v_org, v_env, NULL, 'submitted', x.v ->> 'actor'
      FROM jsonb_array_elements(v_placed) AS x(v), jsonb_to_recordset(x.v -> 'history') AS h(id text, order_id text);
    PERFORM emit_events(v_org, v_env,
                        (SELECT coalesce(jsonb_agg(e.e ORDER BY x.n, e.n), '[]'::jsonb)
                           FROM jsonb_array_elements(v_placed) WITH ORDINALITY AS x(v, n),
                                jsonb_array_elements(x.v -> 'events') WITH ORDINALITY AS e(e, n)));
    SELECT coalesce(jsonb_agg(d.d ORDER BY x.n, d.n), '[]'::jsonb)
      INTO v_debits
      FROM jsonb_array_elements(v_placed) WITH ORDINALITY AS x(v, n),
           jsonb_array_elements(x.v -> 'debits') WITH ORDINALITY AS d(d, n);
    IF jsonb_array_length(v_debits) > 0 THEN
      SELECT sum((x.v ->> 'min_balance_cents')::bigint) INTO v_min FROM jsonb_array_elements(v_placed) AS x(v);
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

DROP FUNCTION place_order_group(jsonb);
