-- The Idempotency-Key of the request that placed a group, written in the order's own transaction: a retry that
-- takes over an abandoned key (the first process died after its commit) finds the group instead of placing again.
ALTER TABLE order_groups ADD COLUMN idempotency_key text;
CREATE UNIQUE INDEX order_groups_idempotency_key ON order_groups (organization_id, environment, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
