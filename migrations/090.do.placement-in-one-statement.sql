-- Writes that the order path makes in one round trip (ORD-13, BILL-17, EVT-5, OPS-5).
--
-- 1. No NOTIFY inside the transactions that write events. PostgreSQL serialises every committing transaction that
--    notified (one server-wide lock held until its commit is on disk), so the statement-level trigger of migration 040
--    made every order and status change commit alone. The application now signals after commit
--    (src/lib/commit-signals.ts).
DROP TRIGGER events_notify_inserted ON events;
DROP FUNCTION notify_events_inserted();

-- 2. post_ledger_entries: THE way entries are appended to a tenant's ledger (BILL-17). Locks the tenant's
--    balance row (creating it at 0 when missing); unless p_min_balance is NULL, checks that the balance is at least
--    that many cents, and when it is not writes nothing and returns one row whose id is NULL (balance_before = the
--    balance). Otherwise moves the balance by the sum of the entries and appends them in the order given, with ids
--    sorting after the tenant's newest entry and each balance_after_cents the running sum. p_entries: JSON array of
--    {type, amount_cents, line_type, description, order_id, reverses_entry_id, created_by}; amounts signed cents.
CREATE FUNCTION post_ledger_entries(p_org text, p_env text, p_entries jsonb, p_min_balance bigint)
RETURNS TABLE (id text, organization_id text, environment text, type text, amount_cents bigint, balance_after_cents bigint,
               line_type text, description text, order_id text, reverses_entry_id text, created_by text,
               created_at timestamptz, balance_before bigint)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_before bigint;
  v_last text;
  v_n int := jsonb_array_length(p_entries);
  v_ids text[];
BEGIN
  SELECT b.balance_cents, b.last_entry_id INTO v_before, v_last
    FROM balances b WHERE b.organization_id = p_org AND b.environment = p_env FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO balances (organization_id, environment) VALUES (p_org, p_env) ON CONFLICT DO NOTHING;
    SELECT b.balance_cents, b.last_entry_id INTO v_before, v_last
      FROM balances b WHERE b.organization_id = p_org AND b.environment = p_env FOR UPDATE;
  END IF;
  IF p_min_balance IS NOT NULL AND v_before < p_min_balance THEN
    RETURN QUERY SELECT NULL::text, p_org, p_env, NULL::text, NULL::bigint, NULL::bigint, NULL::text, NULL::text, NULL::text,
                        NULL::text, NULL::text, NULL::timestamptz, v_before;
    RETURN;
  END IF;
  v_ids := ids_after('txn', v_last, v_n);
  UPDATE balances b
     SET balance_cents = b.balance_cents + (SELECT sum((e ->> 'amount_cents')::bigint) FROM jsonb_array_elements(p_entries) e),
         last_entry_id = v_ids[v_n], updated_at = now()
   WHERE b.organization_id = p_org AND b.environment = p_env;
  RETURN QUERY
    INSERT INTO ledger_entries AS le (id, organization_id, environment, type, amount_cents, balance_after_cents, line_type,
                                      description, order_id, reverses_entry_id, created_by)
    SELECT v_ids[l.n], p_org, p_env, l.type, l.amount_cents, v_before + sum(l.amount_cents) OVER (ORDER BY l.n),
           l.line_type, l.description, l.order_id, l.reverses_entry_id, l.created_by
      FROM ROWS FROM (jsonb_to_recordset(p_entries)
             AS (type text, amount_cents bigint, line_type text, description text, order_id text, reverses_entry_id text, created_by text))
           WITH ORDINALITY AS l(type, amount_cents, line_type, description, order_id, reverses_entry_id, created_by, n)
    RETURNING le.id, le.organization_id, le.environment, le.type, le.amount_cents, le.balance_after_cents, le.line_type,
              le.description, le.order_id, le.reverses_entry_id, le.created_by, le.created_at, v_before;
END
$$;

-- 3. emit_events: THE way events are written (EVT-5): the events of one tenant from a JSON array of {id, type, data},
--    and one webhook delivery, due now, per (event, enabled endpoint of the tenant subscribed to its type): the outbox
--    the dispatchers claim from. Returns each event's id and created_at.
CREATE FUNCTION emit_events(p_org text, p_env text, p_events jsonb)
RETURNS TABLE (id text, created_at timestamptz)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    WITH ev AS (
      INSERT INTO events (id, organization_id, environment, type, data)
      SELECT e.id, p_org, p_env, e.type, e.data FROM jsonb_to_recordset(p_events) AS e(id text, type text, data jsonb)
      RETURNING events.id, events.type, events.created_at
    ), deliveries AS (
      INSERT INTO webhook_deliveries (id, organization_id, environment, endpoint_id, event_id, next_attempt_at)
      SELECT new_id('wd'), p_org, p_env, w.id, ev.id, now()
        FROM ev JOIN webhook_endpoints w
          ON w.organization_id = p_org AND w.environment = p_env AND w.deleted_at IS NULL AND NOT w.disabled AND ev.type = ANY(w.event_types)
    )
    SELECT ev.id, ev.created_at FROM ev;
END
$$;

-- 4. place_order_group: THE placement writer (ORD-13). Everything was planned by the application (ids, amounts,
--    rows, event data, ledger lines); this writes it in the order that keeps the balance row locked the shortest:
--    the company (a formation) and its admin, the order group, the orders and their `submitted` history, the events
--    and their deliveries, and LAST the debit. Outcomes (jsonb):
--      {"outcome": "placed", "created_at": <timestamptz>}  everything written;
--      {"outcome": "unknown_user"}  p.user_id is not a user of the tenant: nothing written;
--      {"outcome": "slug_taken"}    the formation company's slug exists in the tenant: nothing written (pick another).
--    When the balance cannot cover p.min_balance_cents it raises SQLSTATE 'FC402' with the balance (cents) as DETAIL,
--    so the statement, and the caller's transaction, write nothing (billing rule 2).
--    p: {organization_id, environment, user_id, actor, company (null or {id, slug, <company columns>}),
--        group {id, user_id, company_id, filing_state, source, billing, request, total_cents, idempotency_key},
--        orders [<orders columns>], history [{id, order_id}], events [{id, type, data}], debits [ledger entries],
--        min_balance_cents}
CREATE FUNCTION place_order_group(p jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_org text := p ->> 'organization_id';
  v_env text := p ->> 'environment';
  v_before bigint;
BEGIN
  PERFORM 1 FROM users u WHERE u.id = p ->> 'user_id' AND u.organization_id = v_org AND u.environment = v_env;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('outcome', 'unknown_user');
  END IF;
  IF jsonb_typeof(p -> 'company') = 'object' THEN
    INSERT INTO companies (id, organization_id, environment, slug, legal_name, trade_name, ein, entity_type, structure_type,
                           tax_election, fiscal_end_month, formation_date, formation_state, principal_address, mailing_address, officers)
    SELECT r.id, v_org, v_env, r.slug, r.legal_name, r.trade_name, r.ein, r.entity_type, r.structure_type,
           r.tax_election, r.fiscal_end_month, r.formation_date, r.formation_state, r.principal_address, r.mailing_address, r.officers
      FROM jsonb_populate_record(NULL::companies, p -> 'company') r
    ON CONFLICT ON CONSTRAINT companies_slug_unique DO NOTHING;
    IF NOT FOUND THEN
      RETURN jsonb_build_object('outcome', 'slug_taken');
    END IF;
    INSERT INTO company_admins (company_id, user_id, organization_id, environment)
    VALUES (p -> 'company' ->> 'id', p ->> 'user_id', v_org, v_env)
    ON CONFLICT (company_id, user_id) DO NOTHING;
  END IF;
  INSERT INTO order_groups (id, organization_id, environment, user_id, company_id, filing_state, source, billing, request, total_cents, idempotency_key)
  SELECT g.id, v_org, v_env, g.user_id, g.company_id, g.filing_state, g.source, g.billing, g.request, g.total_cents, g.idempotency_key
    FROM jsonb_populate_record(NULL::order_groups, p -> 'group') g;
  INSERT INTO orders (id, organization_id, environment, group_id, company_id, user_id, order_type, filing_state, filing_status,
                      filing_type, subscription_status, details, billing, amount_cents, retail_cents, margin_cents, current_period_end)
  SELECT o.id, v_org, v_env, p -> 'group' ->> 'id', o.company_id, o.user_id, o.order_type, o.filing_state, 'submitted',
         o.filing_type, o.subscription_status, o.details, o.billing, o.amount_cents, o.retail_cents, o.margin_cents,
         CASE WHEN o.subscription_status IS NOT NULL THEN ((now() AT TIME ZONE 'UTC')::date + interval '1 year')::date END
    FROM jsonb_populate_recordset(NULL::orders, p -> 'orders') o;
  INSERT INTO order_status_history (id, order_id, organization_id, environment, from_status, to_status, actor)
  SELECT h.id, h.order_id, v_org, v_env, NULL, 'submitted', p ->> 'actor'
    FROM jsonb_to_recordset(p -> 'history') AS h(id text, order_id text);
  PERFORM emit_events(v_org, v_env, p -> 'events');
  IF jsonb_array_length(p -> 'debits') > 0 THEN
    SELECT e.balance_before INTO v_before
      FROM post_ledger_entries(v_org, v_env, p -> 'debits', (p ->> 'min_balance_cents')::bigint) e
     WHERE e.id IS NULL;
    IF FOUND THEN
      RAISE EXCEPTION 'insufficient balance' USING ERRCODE = 'FC402', DETAIL = v_before::text;
    END IF;
  END IF;
  RETURN jsonb_build_object('outcome', 'placed', 'created_at', now());
END
$$;

-- 5. Prices and state fees are kept in each process's memory (BILL-19); any change to them tells every process to
--    read them again. These tables change rarely (operators, integrators setting prices), so a NOTIFY in their
--    transactions costs nothing that matters.
CREATE FUNCTION notify_pricing_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('pricing_changed', '*');
  RETURN NULL;
END
$$;
CREATE TRIGGER price_catalog_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON price_catalog
  FOR EACH STATEMENT EXECUTE FUNCTION notify_pricing_changed();
CREATE TRIGGER organization_prices_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON organization_prices
  FOR EACH STATEMENT EXECUTE FUNCTION notify_pricing_changed();
CREATE TRIGGER organization_wholesale_prices_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON organization_wholesale_prices
  FOR EACH STATEMENT EXECUTE FUNCTION notify_pricing_changed();
CREATE TRIGGER state_fees_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON state_fees
  FOR EACH STATEMENT EXECUTE FUNCTION notify_pricing_changed();
