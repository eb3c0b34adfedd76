-- The low-balance alert (FUND-15 to FUND-17, FUND-19, FUND-28, FUND-29): when a posting takes a tenant's balance from at
-- or above its organization's low_balance_threshold_cents to below it, the event balance.low is written, with its
-- webhook deliveries (emit_events), in the same statement and so the same transaction as the debit; for the live
-- balance the graphile-worker job `send_low_balance_email` (one per event: its job key) is queued with it, to email the
-- organization's billing contacts. It follows the balance row itself, which only the ledger's functions move (BILL-17),
-- so every way money is taken (order placements, renewals, clawbacks) is covered, and a posting of several entries
-- crosses once. Once per crossing needs no state: the next alert needs a balance at or above the threshold again first.
-- Postings that do not lower the balance do not run it. The email is the job's, never sent here.
CREATE OR REPLACE FUNCTION alert_low_balance() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_threshold bigint;
  v_event_id text;
BEGIN
  SELECT o.low_balance_threshold_cents INTO v_threshold FROM organizations o WHERE o.id = NEW.organization_id;
  IF v_threshold IS NOT NULL AND OLD.balance_cents >= v_threshold AND NEW.balance_cents < v_threshold THEN
    v_event_id := new_id('evt');
    PERFORM emit_events(NEW.organization_id, NEW.environment, jsonb_build_array(jsonb_build_object(
      'id', v_event_id,
      'type', 'balance.low',
      'data', jsonb_build_object('balance', round(NEW.balance_cents / 100.0, 2),
                                 'threshold', round(v_threshold / 100.0, 2),
                                 'balanceTransactionId', NEW.last_entry_id))));
    -- FUND-28: the billing contacts hear of a crossing of the live balance only; the test balance alerts by event.
    IF NEW.environment = 'live' THEN
      PERFORM graphile_worker.add_job('send_low_balance_email', json_build_object('eventId', v_event_id),
                                      max_attempts => 12, job_key => 'balance-low:' || v_event_id);
    END IF;
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER balances_low_alert
  AFTER UPDATE OF balance_cents ON balances
  FOR EACH ROW WHEN (NEW.balance_cents < OLD.balance_cents)
  EXECUTE FUNCTION alert_low_balance();
