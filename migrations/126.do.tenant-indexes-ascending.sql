-- The tenant indexes that every placement and every webhook delivery writes, ascending (ORD-41). Newest-first pages
-- read them backward, which PostgreSQL does as well as forward, with the same keyset bounds.
--
-- Declared descending, a new row's entry went FIRST in its tenant's range, before the entries of the rows placed just
-- before it: a leaf page that fills up there splits in the middle (no ascending pattern to recognise), and its right
-- half, holding older entries, is never written again, so these indexes stayed about half full and split more
-- often, each split writing half a page of WAL. Ascending, the entry goes LAST in its tenant's range, right after the
-- previous row's, which PostgreSQL recognises as an increasing series and splits to leave the old page full.
-- Measured with `BENCH_ONLY=orders BENCH_SECONDS=3` (docs/performance.md, "Index entries of an order row"): page
-- splits 1.20 % of leaf inserts against 1.45 %, WAL per order 17.4 KiB against 20.1, in every run.
DROP INDEX orders_tenant_recent, orders_tenant_state_recent, orders_tenant_status_recent, orders_tenant_type_recent,
  orders_tenant_user_recent, ledger_entries_tenant, ledger_entries_tenant_recent, ledger_entries_tenant_type_recent,
  events_tenant, events_tenant_company, events_tenant_order, events_tenant_type, webhook_deliveries_endpoint,
  webhook_deliveries_tenant, webhook_deliveries_tenant_status;
CREATE INDEX orders_tenant_recent ON orders (organization_id, environment, created_at, id) WITH (deduplicate_items = off);
CREATE INDEX orders_tenant_state_recent ON orders (organization_id, environment, filing_state, created_at, id)
  WITH (deduplicate_items = off);
CREATE INDEX orders_tenant_status_recent ON orders (organization_id, environment, filing_status, created_at, id)
  WITH (deduplicate_items = off);
CREATE INDEX orders_tenant_type_recent ON orders (organization_id, environment, order_type, created_at, id)
  WITH (deduplicate_items = off);
CREATE INDEX orders_tenant_user_recent ON orders (organization_id, environment, user_id, created_at, id)
  WITH (deduplicate_items = off);
CREATE INDEX ledger_entries_tenant ON ledger_entries (organization_id, environment, id) WITH (deduplicate_items = off);
CREATE INDEX ledger_entries_tenant_recent ON ledger_entries (organization_id, environment, created_at, id)
  WITH (deduplicate_items = off);
CREATE INDEX ledger_entries_tenant_type_recent ON ledger_entries (organization_id, environment, type, created_at, id)
  WITH (deduplicate_items = off);
CREATE INDEX events_tenant ON events (organization_id, environment, id) WITH (deduplicate_items = off);
CREATE INDEX events_tenant_company ON events (organization_id, environment, (data ->> 'companyId'), id)
  WITH (deduplicate_items = off);
CREATE INDEX events_tenant_order ON events (organization_id, environment, (data ->> 'orderId'), id)
  WITH (deduplicate_items = off);
CREATE INDEX events_tenant_type ON events (organization_id, environment, type, id) WITH (deduplicate_items = off);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id) WITH (deduplicate_items = off);
CREATE INDEX webhook_deliveries_tenant ON webhook_deliveries (organization_id, environment, id)
  WITH (deduplicate_items = off);
CREATE INDEX webhook_deliveries_tenant_status ON webhook_deliveries (organization_id, environment, status, id)
  WITH (deduplicate_items = off);
