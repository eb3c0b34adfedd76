-- post_ledger_entries(p_org, p_env, p_entries, p_min_balance): THE way entries are appended to a tenant's ledger
-- (BILL-17). p_entries: a JSON array of objects {type, amount_cents, line_type, description, order_id,
-- reverses_entry_id, created_by, reference} read by name (other keys are ignored; a missing one is null), amounts in
-- signed cents. `reference` names the payment an entry comes from (a top-up, a dispute, a refund: FUND-5, FUND-10).
--
-- Locks the tenant's balance row (creating it at 0 when missing); unless p_min_balance is NULL, checks that the balance
-- is at least that many cents, and when it is not writes nothing and returns one row whose id is NULL (balance_before =
-- the balance). Otherwise moves the balance by the sum of the entries and appends them in the order given, with ids
-- sorting after the tenant's newest entry (ids_after) and each balance_after_cents the running sum.
--
-- It runs with its owner's rights (SEC-3: the service role may not update `balances`), with a fixed search_path, and
-- only the service role may call it. Planned once per connection (generic plans, ORD-13).
CREATE OR REPLACE FUNCTION post_ledger_entries(p_org text, p_env text, p_entries jsonb, p_min_balance bigint)
RETURNS TABLE (id text, organization_id text, environment text, type text, amount_cents bigint,
               balance_after_cents bigint, line_type text, description text, order_id text, reverses_entry_id text,
               created_by text, created_at timestamptz, balance_before bigint)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET plan_cache_mode = force_generic_plan
SET search_path = public, pg_temp
AS $$
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
    RETURN QUERY SELECT NULL::text, p_org, p_env, NULL::text, NULL::bigint, NULL::bigint, NULL::text, NULL::text,
                        NULL::text, NULL::text, NULL::text, NULL::timestamptz, v_before;
    RETURN;
  END IF;
  v_ids := ids_after('txn', v_last, v_n);
  RETURN QUERY
    WITH l AS MATERIALIZED (
      SELECT l.*, v_before + sum(l.amount_cents) OVER (ORDER BY l.i) AS balance_after_cents
        FROM ROWS FROM (jsonb_to_recordset(p_entries)
                          AS (type text, amount_cents bigint, line_type text, description text, order_id text,
                              reverses_entry_id text, created_by text, reference text))
             WITH ORDINALITY
               AS l(type, amount_cents, line_type, description, order_id, reverses_entry_id, created_by, reference, i)
    ), moved AS (
      UPDATE balances b
         SET balance_cents = b.balance_cents + (SELECT sum(l.amount_cents) FROM l),
             last_entry_id = v_ids[v_n], updated_at = now()
       WHERE b.organization_id = p_org AND b.environment = p_env
    )
    INSERT INTO ledger_entries AS le (id, organization_id, environment, type, amount_cents, balance_after_cents,
                                      line_type, description, order_id, reverses_entry_id, created_by, reference)
    SELECT v_ids[l.i], p_org, p_env, l.type, l.amount_cents, l.balance_after_cents, l.line_type, l.description,
           l.order_id, l.reverses_entry_id, l.created_by, l.reference
      FROM l
    RETURNING le.id, le.organization_id, le.environment, le.type, le.amount_cents, le.balance_after_cents, le.line_type,
              le.description, le.order_id, le.reverses_entry_id, le.created_by, le.created_at, v_before;
END
$$;
REVOKE EXECUTE ON FUNCTION post_ledger_entries(text, text, jsonb, bigint) FROM PUBLIC;
