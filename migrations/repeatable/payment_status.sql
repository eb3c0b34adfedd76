-- payment_status(p_payment): the payment's status now, its newest payment_statuses row (PAY-4); null for no such
-- payment.
CREATE OR REPLACE FUNCTION payment_status(p_payment text) RETURNS text
LANGUAGE sql STABLE
AS $$
  SELECT s.status FROM payment_statuses s WHERE s.payment_id = p_payment ORDER BY s.id DESC LIMIT 1
$$;
