-- The rows an order writes no longer point at the organizations and users rows with foreign keys (ORD-16).
--
-- A foreign-key check locks the referenced row FOR KEY SHARE until commit. Every order of a tenant referenced the
-- same organizations row (from its company, order group, orders, events and ledger entries) and usually the same
-- users row, so concurrent orders of one tenant shared those locks, which PostgreSQL keeps as a new multixact per
-- locking transaction: measured, about a millisecond of database time per order and a quarter of the throughput.
-- What these keys guarded is kept otherwise:
--   * organizations are never deleted, and every tenant column is set from the authenticated API key, a session or
--     the operator's choice of an existing organization;
--   * an order's user is checked to be the tenant's by place_order_group before anything is written, users are
--     never deleted, and company_admins keeps its key to users;
--   * a ledger entry must belong to an existing balance: its tenant now references the balance row, which the
--     posting already holds locked (no extra lock is taken).
ALTER TABLE companies DROP CONSTRAINT companies_organization_id_fkey;
ALTER TABLE order_groups DROP CONSTRAINT order_groups_organization_id_fkey;
ALTER TABLE order_groups DROP CONSTRAINT order_groups_user_id_fkey;
ALTER TABLE orders DROP CONSTRAINT orders_organization_id_fkey;
ALTER TABLE orders DROP CONSTRAINT orders_user_id_fkey;
ALTER TABLE events DROP CONSTRAINT events_organization_id_fkey;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_organization_id_fkey;
ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_balance_fkey
  FOREIGN KEY (organization_id, environment) REFERENCES balances (organization_id, environment);

-- Two indexes every order paid for and no query needs: the events of an order are always read within their tenant
-- (events_tenant_order), and orders by company are found through orders_company_type_state, which starts with it.
DROP INDEX events_order;
DROP INDEX orders_company;
