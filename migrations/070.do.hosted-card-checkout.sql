-- Live card payments through a hosted payment page (Stripe Checkout), rules PAY-1..PAY-8 in docs/rules.md.
--
-- card_checkouts: one row per hosted payment page opened by a dashboard checkout. The order is placed only when
-- the provider confirms payment (a signed webhook), so what to place is kept here meanwhile: `intent` holds the
-- order request sealed with the instance secret (it may carry an EIN responsible party's tax id) and is cleared
-- once the checkout is settled (paid, failed, expired).
CREATE TABLE card_checkouts (
  id                  text PRIMARY KEY,
  organization_id     text NOT NULL REFERENCES organizations(id),
  environment         text NOT NULL CHECK (environment IN ('live', 'test')),
  user_id             text NOT NULL REFERENCES users(id),
  company_id          text REFERENCES companies(id),
  provider            text NOT NULL,
  provider_session_id text UNIQUE,
  redirect_url        text,
  form_key            text,
  amount_cents        bigint NOT NULL CHECK (amount_cents > 0),
  intent              jsonb,
  status              text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'processing', 'paid', 'failed', 'expired')),
  group_id            text REFERENCES order_groups(id),
  payment_id          text REFERENCES payments(id),
  failure_message     text,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  CHECK (status <> 'paid' OR payment_id IS NOT NULL)
);
CREATE INDEX card_checkouts_form ON card_checkouts (organization_id, environment, form_key, created_at DESC) WHERE form_key IS NOT NULL;

-- Every provider event handled, by the provider's event id: a replayed or duplicated delivery finds its id here
-- and changes nothing (PAY-4).
CREATE TABLE payment_provider_events (
  id          text PRIMARY KEY,
  provider    text NOT NULL,
  type        text NOT NULL,
  checkout_id text REFERENCES card_checkouts(id),
  received_at timestamptz NOT NULL DEFAULT now()
);

-- One refund per cancelled card-paid order (PAY-6): its retail + state fee, sent to the provider by a job with the
-- row id as idempotency key, retried until the provider accepts it.
CREATE TABLE card_refunds (
  id                 text PRIMARY KEY,
  organization_id    text NOT NULL REFERENCES organizations(id),
  environment        text NOT NULL CHECK (environment IN ('live', 'test')),
  order_id           text NOT NULL UNIQUE REFERENCES orders(id),
  payment_id         text NOT NULL REFERENCES payments(id),
  provider           text NOT NULL,
  amount_cents       bigint NOT NULL CHECK (amount_cents > 0),
  status             text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded')),
  provider_reference text,
  attempts           integer NOT NULL DEFAULT 0,
  last_error         text,
  last_attempt_at    timestamptz,
  created_at         timestamptz NOT NULL DEFAULT now(),
  refunded_at        timestamptz,
  CHECK ((status = 'succeeded') = (refunded_at IS NOT NULL))
);
CREATE INDEX card_refunds_pending ON card_refunds (created_at) WHERE status = 'pending';
CREATE INDEX card_refunds_payment ON card_refunds (payment_id);

-- The database guards the money: the refunds of one payment never add up to more than it collected.
CREATE FUNCTION card_refunds_within_payment() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE CONSTRAINT TRIGGER card_refunds_within_payment AFTER INSERT OR UPDATE OF amount_cents ON card_refunds
  FOR EACH ROW EXECUTE FUNCTION card_refunds_within_payment();
