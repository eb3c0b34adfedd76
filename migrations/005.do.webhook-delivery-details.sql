-- Webhooks (issue 4 items 6-7): what 001 lacks for endpoints, deliveries and attempts.

-- An optional label the integrator gives an endpoint ("Production receiver").
ALTER TABLE webhook_endpoints ADD COLUMN description text;

-- Why a delivery ended failed (schedule exhausted, 410 Gone, endpoint disabled or deleted), shown by
-- GET /webhook-deliveries/{id}.
ALTER TABLE webhook_deliveries ADD COLUMN failure_reason text;

-- false for deliveries that get exactly one attempt: webhook.test pings and manual resends.
ALTER TABLE webhook_deliveries ADD COLUMN auto_retry boolean NOT NULL DEFAULT true;

-- An attempt number is taken once per delivery, even if two workers raced on the same delivery.
CREATE UNIQUE INDEX webhook_attempts_delivery_number ON webhook_attempts (delivery_id, attempt_number);
DROP INDEX webhook_attempts_delivery;

CREATE INDEX webhook_deliveries_tenant_status ON webhook_deliveries (organization_id, environment, status, id DESC);
