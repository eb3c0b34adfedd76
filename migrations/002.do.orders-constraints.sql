-- Orders (issue 3): the database backs the rules POST /orders checks under the company row lock.
-- registeredAgent rule 4: at most one active registered agent service per company and state (a second order is a no-op).
CREATE UNIQUE INDEX orders_one_active_registered_agent ON orders (company_id, filing_state)
  WHERE order_type = 'registered_agent' AND subscription_status = 'active' AND filing_status <> 'cancelled';
-- EIN rule: one non-cancelled EIN order per company.
CREATE UNIQUE INDEX orders_one_ein ON orders (company_id) WHERE order_type = 'ein' AND filing_status <> 'cancelled';
-- Lookups of the rules: a company's orders of one type in one state.
CREATE INDEX orders_company_type_state ON orders (company_id, order_type, filing_state);
-- Idempotency keys older than 24 h are replaced on reuse; this index serves a periodic purge.
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
