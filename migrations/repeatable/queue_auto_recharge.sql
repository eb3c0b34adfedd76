-- Auto-recharge's trigger (FUND-33, FUND-34): when a posting lowers an organization's LIVE balance to below the
-- threshold of its auto-recharge (on, with a saved method), one recharge is queued: an auto_recharges row and its
-- graphile-worker job `run_auto_recharge`, in the same statement and so the same transaction as the debit (a debit that
-- rolls back queues nothing). It follows the balance row, which only the ledger's functions move (BILL-17), so order
-- placements and renewals are covered without a change of their own; a clawback queues none (the payer disputed or was
-- refunded a payment: the saved method is not charged again for it). At most one recharge is in flight per
-- organization: the partial unique index auto_recharges_one_in_flight turns the insert of a second into nothing, and
-- debits of one tenant are serialised on its balance row. The test balance never queues one (FUND-38). The Stripe call
-- is the job's, never made here. Runs with its owner's rights, with a fixed search_path.
CREATE OR REPLACE FUNCTION queue_auto_recharge() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
  s auto_recharge_settings%ROWTYPE;
  v_id text;
BEGIN
  SELECT * INTO s FROM auto_recharge_settings WHERE organization_id = NEW.organization_id;
  IF NOT FOUND OR NOT s.enabled OR NEW.balance_cents >= s.threshold_cents THEN
    RETURN NULL;
  END IF;
  -- A clawback (a disputed or refunded payment taken back) never charges the saved method again: the next debit does.
  -- The posting's entries are written by the statement that moved the balance, so they are visible here.
  IF EXISTS (SELECT 1 FROM ledger_entries e WHERE e.id = NEW.last_entry_id AND e.type = 'clawback') THEN
    RETURN NULL;
  END IF;
  INSERT INTO auto_recharges (id, organization_id, amount_cents, threshold_cents, stripe_customer, payment_method,
                              triggered_by, balance_cents)
  VALUES (new_id('arc'), NEW.organization_id, s.amount_cents, s.threshold_cents, s.stripe_customer, s.payment_method,
          NEW.last_entry_id, NEW.balance_cents)
  ON CONFLICT (organization_id) WHERE status IN ('queued', 'processing') DO NOTHING
  RETURNING id INTO v_id;
  IF v_id IS NOT NULL THEN
    PERFORM graphile_worker.add_job('run_auto_recharge', json_build_object('autoRechargeId', v_id),
                                    max_attempts => 10);
  END IF;
  RETURN NULL;
END
$$;
REVOKE EXECUTE ON FUNCTION queue_auto_recharge() FROM PUBLIC;

CREATE OR REPLACE TRIGGER balances_queue_auto_recharge
  AFTER UPDATE OF balance_cents ON balances
  FOR EACH ROW WHEN (NEW.environment = 'live' AND NEW.balance_cents < OLD.balance_cents)
  EXECUTE FUNCTION queue_auto_recharge();
