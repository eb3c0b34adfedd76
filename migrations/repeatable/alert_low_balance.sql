-- The low-balance alert (FUND-15 to FUND-17, FUND-19): when a posting takes a tenant's balance from at or above its
-- organization's low_balance_threshold_cents to below it, the event balance.low is written, with its webhook deliveries
-- (emit_events), in the same statement and so the same transaction as the debit. It follows the balance row itself,
-- which only the ledger's functions move (BILL-17), so every way money is taken (order placements, renewals, clawbacks)
-- is covered, and a posting of several entries crosses once. Once per crossing needs no state: the next alert needs a
-- balance at or above the threshold again first. Postings that do not lower the balance do not run it.
CREATE OR REPLACE FUNCTION alert_low_balance() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_threshold bigint;
BEGIN
  SELECT o.low_balance_threshold_cents INTO v_threshold FROM organizations o WHERE o.id = NEW.organization_id;
  IF v_threshold IS NOT NULL AND OLD.balance_cents >= v_threshold AND NEW.balance_cents < v_threshold THEN
    PERFORM emit_events(NEW.organization_id, NEW.environment, jsonb_build_array(jsonb_build_object(
      'id', new_id('evt'),
      'type', 'balance.low',
      'data', jsonb_build_object('balance', round(NEW.balance_cents / 100.0, 2),
                                 'threshold', round(v_threshold / 100.0, 2),
                                 'balanceTransactionId', NEW.last_entry_id))));
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER balances_low_alert
  AFTER UPDATE OF balance_cents ON balances
  FOR EACH ROW WHEN (NEW.balance_cents < OLD.balance_cents)
  EXECUTE FUNCTION alert_low_balance();
