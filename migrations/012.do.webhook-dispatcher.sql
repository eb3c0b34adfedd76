-- Webhook deliveries are claimed straight from this table by the dispatcher of each worker process (the outbox).
--
-- A claim leases a row: leased_until is when it falls back to the other processes if the claiming process
-- is gone (SIGKILL, lost host); leased_by names the claiming process so that only it records the outcome as the
-- lease holder. Neither column is indexed, and the table keeps free room on each page, so the claim's UPDATE
-- is a heap-only tuple update (no index entry written).
ALTER TABLE webhook_deliveries ADD COLUMN leased_until timestamptz;
ALTER TABLE webhook_deliveries ADD COLUMN leased_by text;
ALTER TABLE webhook_deliveries SET (fillfactor = 70);

-- The claim walks each endpoint's due rows oldest first; only pending rows are in the index, so it stays as
-- small as the backlog whatever the history. The backlog figures (count, oldest due) read it too.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending';
