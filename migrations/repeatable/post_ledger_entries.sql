-- post_ledger_entries(p_org, p_env, p_entries, p_min_balance): the entries of ONE tenant's ledger, posted by
-- post_ledger_entries_of_tenants (BILL-17; see there for p_entries, the balance lock and what it returns): unless
-- p_min_balance is NULL, the balance must be at least that many cents, else nothing is written and one row whose id is
-- NULL says the balance (balance_before).
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
BEGIN
  RETURN QUERY SELECT *
    FROM post_ledger_entries_of_tenants(jsonb_build_array(
           jsonb_build_object('organization_id', p_org, 'environment', p_env, 'min_balance_cents', p_min_balance,
                              'entries', p_entries)));
END
$$;
REVOKE EXECUTE ON FUNCTION post_ledger_entries(text, text, jsonb, bigint) FROM PUBLIC;
