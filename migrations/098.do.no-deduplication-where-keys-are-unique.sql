-- B-tree deduplication is turned off on the non-unique indexes that hold no or few equal keys (ORD-13's cost, counted
-- by `npm run bench:db-instructions`).
--
-- Before a full leaf page of an index with deduplication on is split, PostgreSQL walks the whole page looking for
-- equal keys to merge into posting lists. Most of these indexes never hold two equal keys (their last column is the
-- row's id); the others hold a few equal keys at most (an order's two ledger entries, a company's orders of one type
-- and state, an order's history rows of one moment), too few for posting lists to save space. So the walk finds
-- little or nothing and the page is split anyway. Turning it off saved about 3 % of the PostgreSQL instructions of
-- an order's placement at five placements per statement (2.22 M to 2.16 M). The setting applies to entries inserted
-- from now on; nothing is rebuilt.
ALTER INDEX events_tenant SET (deduplicate_items = off);
ALTER INDEX events_tenant_type SET (deduplicate_items = off);
ALTER INDEX events_tenant_order SET (deduplicate_items = off);
ALTER INDEX events_stream SET (deduplicate_items = off);
ALTER INDEX ledger_entries_tenant SET (deduplicate_items = off);
ALTER INDEX ledger_entries_order SET (deduplicate_items = off);
ALTER INDEX orders_queue_order SET (deduplicate_items = off);
ALTER INDEX orders_company_type_state SET (deduplicate_items = off);
ALTER INDEX order_status_history_order SET (deduplicate_items = off);
ALTER INDEX webhook_deliveries_tenant SET (deduplicate_items = off);
ALTER INDEX webhook_deliveries_endpoint SET (deduplicate_items = off);
ALTER INDEX webhook_deliveries_tenant_status SET (deduplicate_items = off);
