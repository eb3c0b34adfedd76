-- One-time views of a secret the partner portal has just made (PORTAL-46): a new or rolled API key, a webhook
-- endpoint's signing secret, two-factor recovery codes. The form's POST keeps the secret here, sealed under the data
-- key (SEC-2's scheme) and bound to the session that made it, and redirects (303) to its page, which takes it: the
-- row is deleted as it is read, so a reload, Back or another session finds nothing and shows that it was shown
-- already. A view not taken within minutes expires (the daily purge deletes it, OPS-3).
CREATE TABLE portal_secret_views (
  id           text PRIMARY KEY,
  session_hash text NOT NULL REFERENCES portal_sessions(id_hash),
  kind         text NOT NULL CHECK (kind IN ('api_key', 'webhook_secret', 'recovery_codes')),
  sealed       text NOT NULL,
  expires_at   timestamptz NOT NULL
);
CREATE INDEX portal_secret_views_expiry ON portal_secret_views (expires_at);

-- The portal's order list filtered by product type (PORTAL-30, PORTAL-47). Migration 110 read a type's page from the
-- unfiltered index, as each of the five API types was a large share of a tenant's orders; a type that is rare or old
-- in a tenant (EIN orders, one per company, or DBAs) then walks nearly every order: at 1,000,000 orders, a page of a
-- type that is 1 % of them and the oldest took seconds. An index per type, ending in the list's order, reads only
-- the page's rows, as the status, state and user filters do.
CREATE INDEX orders_tenant_type_recent ON orders (organization_id, environment, order_type, created_at DESC, id DESC)
  WITH (deduplicate_items = off);

-- An order's page lists the other orders of its group (PORTAL-31): without an index on group_id that read every order
-- of the table (5.7 s at 1,000,000 orders in the bench's portal section).
CREATE INDEX orders_group ON orders (group_id);
