-- What the service's connections may change about money (SEC-3, BILL-13, BILL-17, PAY-4, PAY-6).
--
-- The service's connections no longer switch to fcs_service from the owner's login: they log in as a role that is
-- only a member of fcs_service (src/lib/login-role.ts), so no statement they send can take back the owner's
-- rights. What fcs_service itself may do is narrowed here and in src/lib/service-role.ts:
--   * balances move only through the ledger's functions: fcs_service has no UPDATE on `balances` (and may insert
--     only a row's key, so a new balance starts at 0). post_ledger_entries runs with its owner's rights (SECURITY
--     DEFINER, with a fixed search_path), and lock_balance, also its owner's, takes the row lock a money write
--     takes first (SELECT ... FOR UPDATE needs UPDATE rights, which the service no longer has).
--   * payments, their status changes and the Stripe events handled are insert-only, like the ledger: a status
--     change is a new row of payment_statuses, the newest of a payment's rows is its status (payment_status).
--     payments.status stays the status a payment was recorded with, which every version writes: the trigger
--     payments_first_status turns it into the payment's first payment_statuses row, so payments recorded by a
--     process of the previous version during a rolling deploy get theirs too.
--   * the refunds-within-payment check (PAY-6) locks the payment row with its owner's rights.
-- Processes of the previous version keep placing orders during a rolling deploy; their cancellations and renewals
-- (which lock the balance row themselves) and their Stripe event handling (which linked the event with an UPDATE)
-- are refused as a whole and succeed when retried against this version (Stripe redelivers a failed event).

-- Balances ------------------------------------------------------------------------------------------------------

ALTER FUNCTION post_ledger_entries(text, text, jsonb, bigint) SECURITY DEFINER SET search_path = public, pg_temp;
REVOKE EXECUTE ON FUNCTION post_ledger_entries(text, text, jsonb, bigint) FROM PUBLIC;

-- lock_balance(p_org, p_env): locks the tenant's balance row until the transaction ends, creating it (0) when
-- missing, and returns the balance in cents (BILL-3: every money write of a tenant takes this lock first).
CREATE FUNCTION lock_balance(p_org text, p_env text) RETURNS bigint
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

-- Payments ------------------------------------------------------------------------------------------------------

CREATE TABLE payment_statuses (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  payment_id text NOT NULL REFERENCES payments(id),
  status     text NOT NULL CHECK (status IN ('succeeded', 'declined', 'refunded')),
  message    text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX payment_statuses_payment ON payment_statuses (payment_id, id);

INSERT INTO payment_statuses (payment_id, status, message, created_at)
SELECT id, status, failure_message, coalesce(refunded_at, created_at) FROM payments ORDER BY created_at, id;

COMMENT ON COLUMN payments.status IS
  'the status the payment was recorded with; its status now is payment_status(id), the newest payment_statuses row';

CREATE FUNCTION payments_first_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO payment_statuses (payment_id, status, message, created_at)
  VALUES (NEW.id, NEW.status, NEW.failure_message, coalesce(NEW.refunded_at, NEW.created_at));
  RETURN NULL;
END
$$;
CREATE TRIGGER payments_first_status AFTER INSERT ON payments
  FOR EACH ROW EXECUTE FUNCTION payments_first_status();

-- payment_status(p_payment): the payment's status now (its newest payment_statuses row), null for no such payment.
CREATE FUNCTION payment_status(p_payment text) RETURNS text
LANGUAGE sql STABLE
AS $$
  SELECT s.status FROM payment_statuses s WHERE s.payment_id = p_payment ORDER BY s.id DESC LIMIT 1
$$;

CREATE TRIGGER payments_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON payments
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
CREATE TRIGGER payment_statuses_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON payment_statuses
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
CREATE TRIGGER payment_provider_events_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON payment_provider_events
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();

-- PAY-6: the refunds of a payment never exceed what it collected. The check locks the payment row (FOR UPDATE, which
-- needs UPDATE rights on payments) so concurrent refunds of one payment are added up one after the other.
ALTER FUNCTION card_refunds_within_payment() SECURITY DEFINER SET search_path = public, pg_temp;
