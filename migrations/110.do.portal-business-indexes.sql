-- The partner portal's order and ledger lists (PORTAL-30, PORTAL-33): newest first by (created_at, id), keyset-paginated,
-- filtered within one tenant. One index per selective filter (status, state, user), each ending in the list's order,
-- so a page of any one of them (and of none) reads only its own rows however many orders or entries the tenant has; a
-- second filter is checked on the rows the first one's index yields. The product type has five values, each a large
-- share of a tenant's orders: a page of one type reads a few times its length from the unfiltered index, cheaper
-- than an index entry more for every order placed. Date ranges are bounds on created_at inside each of these indexes.
-- Every key ends in the row's id, so none holds equal keys: deduplication off, as in migration 098.
--
-- orders_tenant_recent serves everything orders_tenant_created did (same leading columns, the id added), so that one
-- goes: an order's insert writes three index entries more than before (one per selective filter).
CREATE INDEX orders_tenant_recent ON orders (organization_id, environment, created_at DESC, id DESC)
  WITH (deduplicate_items = off);
DROP INDEX orders_tenant_created;
CREATE INDEX orders_tenant_status_recent ON orders (organization_id, environment, filing_status, created_at DESC, id DESC)
  WITH (deduplicate_items = off);
CREATE INDEX orders_tenant_state_recent ON orders (organization_id, environment, filing_state, created_at DESC, id DESC)
  WITH (deduplicate_items = off);
CREATE INDEX orders_tenant_user_recent ON orders (organization_id, environment, user_id, created_at DESC, id DESC)
  WITH (deduplicate_items = off);

CREATE INDEX ledger_entries_tenant_recent ON ledger_entries (organization_id, environment, created_at DESC, id DESC)
  WITH (deduplicate_items = off);
CREATE INDEX ledger_entries_tenant_type_recent
  ON ledger_entries (organization_id, environment, type, created_at DESC, id DESC) WITH (deduplicate_items = off);
