-- The placement statement's rows come as arrays of values, not objects (ORD-13, ORD-17, EVT-5, BILL-17).
--
-- The statement's parameter is parsed into jsonb once, and that parse was about a third of the PostgreSQL
-- instructions each further placement of a batch adds (`npm run bench:db-instructions`): about 6.7 KB of JSON per
-- placement, a fifth of it the column names of its rows (and every object's keys are sorted while it is parsed).
-- Now each row is an array of its values in the column order given below, an order takes what it shares with its
-- group (group, company, user, filing state, billing: equal by ORD-4) from the group's row, and its `submitted`
-- history row's id rides on the order's row: about 4.8 KB per placement, parsed in about 70 % of the time.
-- emit_events and post_ledger_entries, which every other writer of events and ledger entries calls too, take their
-- rows the same way. Counted: 2.53 M PostgreSQL instructions per order became 2.22 M at five placements per
-- statement, 3.98 M became 3.76 M for a statement of one.
--
-- Processes of the previous version keep working during a rolling deploy: they call place_order_groups, which stays
-- as migration 093 left it, while this version calls place_order_groups_v2; emit_events and post_ledger_entries take
-- their rows either way (objects, as the previous version and place_order_groups send them, are turned into arrays
-- first). A later migration can drop place_order_groups and the object form once no such process is left.
--
-- A JSON null in a value's place is SQL NULL.

-- emit_events(p_org, p_env, p_events): p_events [[id, type, data]] (or migration 090's [{id, type, data}]);
-- otherwise as in migration 090 (EVT-5).
CREATE OR REPLACE FUNCTION emit_events(p_org text, p_env text, p_events jsonb)
RETURNS TABLE (id text, created_at timestamptz)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
BEGIN
  IF jsonb_typeof(p_events -> 0) = 'object' THEN
    SELECT jsonb_agg(jsonb_build_array(x.e -> 'id', x.e -> 'type', x.e -> 'data') ORDER BY x.i) INTO p_events
      FROM jsonb_array_elements(p_events) WITH ORDINALITY AS x(e, i);
  END IF;
  RETURN QUERY
    WITH ev AS (
      INSERT INTO events (id, organization_id, environment, type, data)
      SELECT e.r ->> 0, p_org, p_env, e.r ->> 1, nullif(e.r -> 2, 'null') FROM jsonb_array_elements(p_events) AS e(r)
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

-- post_ledger_entries(p_org, p_env, p_entries, p_min_balance): p_entries [[type, amount_cents, line_type,
-- description, order_id, reverses_entry_id, created_by]] (or migration 090's objects with those keys), amounts in
-- signed cents; otherwise as in migration 090 (BILL-17).
CREATE OR REPLACE FUNCTION post_ledger_entries(p_org text, p_env text, p_entries jsonb, p_min_balance bigint)
RETURNS TABLE (id text, organization_id text, environment text, type text, amount_cents bigint,
               balance_after_cents bigint, line_type text, description text, order_id text, reverses_entry_id text,
               created_by text, created_at timestamptz, balance_before bigint)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
  v_before bigint;
  v_last text;
  v_n int := jsonb_array_length(p_entries);
  v_ids text[];
BEGIN
  IF jsonb_typeof(p_entries -> 0) = 'object' THEN
    SELECT jsonb_agg(jsonb_build_array(x.e -> 'type', x.e -> 'amount_cents', x.e -> 'line_type', x.e -> 'description',
                                       x.e -> 'order_id', x.e -> 'reverses_entry_id', x.e -> 'created_by')
                     ORDER BY x.i) INTO p_entries
      FROM jsonb_array_elements(p_entries) WITH ORDINALITY AS x(e, i);
  END IF;
  SELECT b.balance_cents, b.last_entry_id INTO v_before, v_last
    FROM balances b WHERE b.organization_id = p_org AND b.environment = p_env FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO balances (organization_id, environment) VALUES (p_org, p_env) ON CONFLICT DO NOTHING;
    SELECT b.balance_cents, b.last_entry_id INTO v_before, v_last
      FROM balances b WHERE b.organization_id = p_org AND b.environment = p_env FOR UPDATE;
  END IF;
  IF p_min_balance IS NOT NULL AND v_before < p_min_balance THEN
    RETURN QUERY SELECT NULL::text, p_org, p_env, NULL::text, NULL::bigint, NULL::bigint, NULL::text, NULL::text,
                        NULL::text, NULL::text, NULL::text, NULL::timestamptz, v_before;
    RETURN;
  END IF;
  v_ids := ids_after('txn', v_last, v_n);
  UPDATE balances b
     SET balance_cents = b.balance_cents
                         + (SELECT sum((e.r ->> 1)::bigint) FROM jsonb_array_elements(p_entries) AS e(r)),
         last_entry_id = v_ids[v_n], updated_at = now()
   WHERE b.organization_id = p_org AND b.environment = p_env;
  RETURN QUERY
    INSERT INTO ledger_entries AS le (id, organization_id, environment, type, amount_cents, balance_after_cents,
                                      line_type, description, order_id, reverses_entry_id, created_by)
    SELECT v_ids[l.n], p_org, p_env, l.r ->> 0, (l.r ->> 1)::bigint,
           v_before + sum((l.r ->> 1)::bigint) OVER (ORDER BY l.n),
           l.r ->> 2, l.r ->> 3, l.r ->> 4, l.r ->> 5, l.r ->> 6
      FROM jsonb_array_elements(p_entries) WITH ORDINALITY AS l(r, n)
    RETURNING le.id, le.organization_id, le.environment, le.type, le.amount_cents, le.balance_after_cents, le.line_type,
              le.description, le.order_id, le.reverses_entry_id, le.created_by, le.created_at, v_before;
END
$$;

-- place_order_groups_v2(p): outcomes, the returned object and the 402 as place_order_groups' in migration 093.
-- p: {organization_id, environment, idempotency_key_ttl_hours,
--     groups           [[id, user_id, company_id, forms, filing_state, source, billing, request, total_cents,
--                        idempotency_key, min_balance_cents, actor]]   placement n is the n-th (1-based) group
--     companies        [[n, id, slug, legal_name, trade_name, ein, entity_type, structure_type, tax_election,
--                        fiscal_end_month, formation_date, formation_state, principal_address, mailing_address,
--                        officers]]
--     orders           [[n, id, history_id, order_type, filing_type, subscription_status, details, amount_cents,
--                        retail_cents, margin_cents]]
--     events           emit_events' rows, in the order they are to be written; event_placements: each one's n
--     debits           post_ledger_entries' rows, in the order they are to be posted; debit_placements: each one's n}
CREATE FUNCTION place_order_groups_v2(p jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
AS $$
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
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(p -> 'groups') AS g(r) WHERE g.r ->> 9 IS NOT NULL) THEN
    UPDATE order_groups g SET idempotency_key = NULL
     WHERE g.organization_id = v_org AND g.environment = v_env
       AND g.idempotency_key IN (SELECT x.r ->> 9 FROM jsonb_array_elements(p -> 'groups') AS x(r))
       AND g.created_at < now() - make_interval(hours => (p ->> 'idempotency_key_ttl_hours')::int);
  END IF;
  WITH checked AS (
    SELECT g.n, g.r ->> 2 AS company_id, (g.r ->> 3)::boolean AS forms,
           CASE
             WHEN NOT EXISTS (SELECT 1 FROM users u
                               WHERE u.id = g.r ->> 1 AND u.organization_id = v_org AND u.environment = v_env)
               THEN 'unknown_user'
             WHEN g.r ->> 9 IS NOT NULL
                  AND EXISTS (SELECT 1 FROM order_groups o
                               WHERE o.organization_id = v_org AND o.environment = v_env
                                 AND o.idempotency_key = g.r ->> 9)
               THEN 'earlier'
           END AS refused
      FROM jsonb_array_elements(p -> 'groups') WITH ORDINALITY AS g(r, n)
  ), formed AS (
    INSERT INTO companies (id, organization_id, environment, slug, legal_name, trade_name, ein, entity_type,
                           structure_type, tax_election, fiscal_end_month, formation_date, formation_state,
                           principal_address, mailing_address, officers)
    SELECT c.r ->> 1, v_org, v_env, c.r ->> 2, c.r ->> 3, c.r ->> 4, c.r ->> 5, c.r ->> 6, c.r ->> 7, c.r ->> 8,
           c.r ->> 9, (c.r ->> 10)::date, c.r ->> 11, nullif(c.r -> 12, 'null'), nullif(c.r -> 13, 'null'),
           nullif(c.r -> 14, 'null')
      FROM jsonb_array_elements(p -> 'companies') AS c(r)
      JOIN checked k ON k.n = (c.r ->> 0)::int AND k.refused IS NULL
     ORDER BY k.n
    ON CONFLICT ON CONSTRAINT companies_slug_unique DO NOTHING
    RETURNING companies.id
  ), outcome AS (
    SELECT k.n,
           coalesce(k.refused,
                    CASE WHEN k.forms AND NOT EXISTS (SELECT 1 FROM formed f WHERE f.id = k.company_id)
                         THEN 'slug_taken' ELSE 'placed' END) AS outcome
      FROM checked k
  )
  SELECT jsonb_agg(o.outcome ORDER BY o.n), coalesce(array_agg(o.n::int) FILTER (WHERE o.outcome = 'placed'), '{}')
    INTO v_outcomes, v_placed
    FROM outcome o;

  IF cardinality(v_placed) > 0 THEN
    v_all := cardinality(v_placed) = jsonb_array_length(p -> 'groups');
    INSERT INTO company_admins (company_id, user_id, organization_id, environment)
    SELECT g.r ->> 2, g.r ->> 1, v_org, v_env
      FROM jsonb_array_elements(p -> 'groups') WITH ORDINALITY AS g(r, n)
     WHERE (g.r ->> 3)::boolean AND g.n = ANY (v_placed)
    ON CONFLICT (company_id, user_id) DO NOTHING;
    INSERT INTO order_groups (id, organization_id, environment, user_id, company_id, filing_state, source, billing,
                              request, total_cents, idempotency_key)
    SELECT g.r ->> 0, v_org, v_env, g.r ->> 1, g.r ->> 2, g.r ->> 4, g.r ->> 5, g.r ->> 6, nullif(g.r -> 7, 'null'),
           (g.r ->> 8)::bigint, g.r ->> 9
      FROM jsonb_array_elements(p -> 'groups') WITH ORDINALITY AS g(r, n)
     WHERE g.n = ANY (v_placed);
    INSERT INTO orders (id, organization_id, environment, group_id, company_id, user_id, order_type, filing_state,
                        filing_status, filing_type, subscription_status, details, billing, amount_cents, retail_cents,
                        margin_cents, current_period_end)
    SELECT o.r ->> 1, v_org, v_env, g.r ->> 0, g.r ->> 2, g.r ->> 1, o.r ->> 3, g.r ->> 4, 'submitted', o.r ->> 4,
           o.r ->> 5, nullif(o.r -> 6, 'null'), g.r ->> 6, (o.r ->> 7)::bigint, (o.r ->> 8)::bigint,
           (o.r ->> 9)::bigint,
           CASE WHEN o.r ->> 5 IS NOT NULL THEN ((now() AT TIME ZONE 'UTC')::date + interval '1 year')::date END
      FROM jsonb_array_elements(p -> 'orders') AS o(r)
      JOIN jsonb_array_elements(p -> 'groups') WITH ORDINALITY AS g(r, n) ON g.n = (o.r ->> 0)::int
     WHERE g.n = ANY (v_placed);
    INSERT INTO order_status_history (id, order_id, organization_id, environment, from_status, to_status, actor)
    SELECT o.r ->> 2, o.r ->> 1, v_org, v_env, NULL, 'submitted', g.r ->> 11
      FROM jsonb_array_elements(p -> 'orders') AS o(r)
      JOIN jsonb_array_elements(p -> 'groups') WITH ORDINALITY AS g(r, n) ON g.n = (o.r ->> 0)::int
     WHERE g.n = ANY (v_placed);
    IF v_all THEN
      v_events := p -> 'events';
      v_debits := p -> 'debits';
    ELSE
      SELECT coalesce(jsonb_agg(e.r ORDER BY e.i), '[]'::jsonb) INTO v_events
        FROM jsonb_array_elements(p -> 'events') WITH ORDINALITY AS e(r, i)
       WHERE (p -> 'event_placements' ->> (e.i::int - 1))::int = ANY (v_placed);
      SELECT coalesce(jsonb_agg(d.r ORDER BY d.i), '[]'::jsonb) INTO v_debits
        FROM jsonb_array_elements(p -> 'debits') WITH ORDINALITY AS d(r, i)
       WHERE (p -> 'debit_placements' ->> (d.i::int - 1))::int = ANY (v_placed);
    END IF;
    PERFORM emit_events(v_org, v_env, v_events);
    IF jsonb_array_length(v_debits) > 0 THEN
      SELECT sum((g.r ->> 10)::bigint) INTO v_min
        FROM jsonb_array_elements(p -> 'groups') WITH ORDINALITY AS g(r, n)
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
