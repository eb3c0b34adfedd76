-- Issue 4 (filings, documents, events): indexes for the reads this module adds. No new tables.

-- GET /documents (newest first per tenant, optionally per company or order) and the order detail view.
CREATE INDEX documents_tenant ON documents (organization_id, environment, id DESC);
CREATE INDEX documents_order ON documents (order_id) WHERE order_id IS NOT NULL;

-- GET /events?type=… and GET /events?orderId=… (reconciliation of one order's events).
CREATE INDEX events_tenant_type ON events (organization_id, environment, type, id DESC);
CREATE INDEX events_tenant_order ON events (organization_id, environment, (data->>'orderId'), id DESC);

-- The documents table carries no constraint on document_type in 001; the service validates against its list
-- (src/modules/documents/document-types.ts) so the list can grow without a migration.
