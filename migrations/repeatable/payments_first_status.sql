-- A payment's status changes are rows of payment_statuses (PAY-4); payments.status stays the status it was recorded
-- with, which every version writes. This trigger turns that into the payment's first payment_statuses row, so payments
-- recorded by a process of an earlier version get theirs too.
CREATE OR REPLACE FUNCTION payments_first_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO payment_statuses (payment_id, status, message, created_at)
  VALUES (NEW.id, NEW.status, NEW.failure_message, coalesce(NEW.refunded_at, NEW.created_at));
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER payments_first_status AFTER INSERT ON payments
  FOR EACH ROW EXECUTE FUNCTION payments_first_status();
