-- PAY-6: the refunds of one payment never add up to more than it collected. The check locks the payment row (FOR
-- UPDATE, which needs UPDATE rights on payments, which the service role does not have: it runs with its owner's
-- rights, SEC-3) so concurrent refunds of one payment are added up one after the other.
CREATE OR REPLACE FUNCTION card_refunds_within_payment() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
  paid bigint;
  refunded bigint;
BEGIN
  SELECT amount_cents INTO paid FROM payments WHERE id = NEW.payment_id FOR UPDATE;
  SELECT coalesce(sum(amount_cents), 0) INTO refunded FROM card_refunds WHERE payment_id = NEW.payment_id;
  IF refunded > paid THEN
    RAISE EXCEPTION 'refunds of payment % (% cents) exceed what it collected (% cents)', NEW.payment_id, refunded, paid
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END
$$;

-- A constraint trigger cannot be replaced in place (CREATE OR REPLACE does not take them): dropped and created again
-- in the same transaction.
DROP TRIGGER IF EXISTS card_refunds_within_payment ON card_refunds;
CREATE CONSTRAINT TRIGGER card_refunds_within_payment AFTER INSERT OR UPDATE OF amount_cents ON card_refunds
  FOR EACH ROW EXECUTE FUNCTION card_refunds_within_payment();
