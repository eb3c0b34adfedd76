-- lock_balance(p_org, p_env): locks the tenant's balance row until the transaction ends, creating it (0) when missing,
-- and returns the balance in cents (BILL-3: every money write of a tenant takes this lock first). It runs with its
-- owner's rights (SEC-3): SELECT ... FOR UPDATE needs UPDATE rights on balances, which the service role does not have.
-- Only the service role may call it.
CREATE OR REPLACE FUNCTION lock_balance(p_org text, p_env text) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
  v_balance bigint;
BEGIN
  SELECT b.balance_cents INTO v_balance
    FROM balances b WHERE b.organization_id = p_org AND b.environment = p_env FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO balances (organization_id, environment) VALUES (p_org, p_env) ON CONFLICT DO NOTHING;
    SELECT b.balance_cents INTO v_balance
      FROM balances b WHERE b.organization_id = p_org AND b.environment = p_env FOR UPDATE;
  END IF;
  RETURN v_balance;
END
$$;
REVOKE EXECUTE ON FUNCTION lock_balance(text, text) FROM PUBLIC;
