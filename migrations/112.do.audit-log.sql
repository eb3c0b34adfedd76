-- The audit log (AUDIT-1 to AUDIT-9): who changed an organization's API keys, webhook endpoints, portal members,
-- roles and invitations, retail and wholesale prices, branding, white-label domain or billing settings, when, from
-- which address, and the target's allow-listed fields before and after (AUDIT-3: never a secret). Written in the
-- transaction of the change it records (AUDIT-2) and only ever added to: its trigger lives with the other append-only
-- records in migrations/repeatable/refuse_append_only_change.sql, and src/lib/service-role.ts grants the service
-- role SELECT and INSERT only (AUDIT-4).
CREATE TABLE audit_log (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  -- The environment of a per-environment target (API keys, webhook endpoints, retail prices); null for what the
  -- organization has once (members, invitations, branding, domain, billing settings, wholesale prices).
  environment     text CHECK (environment IN ('live', 'test')),
  actor_kind      text NOT NULL CHECK (actor_kind IN ('member', 'operator', 'operator-token', 'cli')),
  -- Member or operator id; null for the operator token and the CLI.
  actor_id        text,
  -- The member's or operator's e-mail address, or the CLI's operating-system user; null when unknown.
  actor_label     text CHECK (length(actor_label) <= 320),
  -- request.ip of the change; null for the CLI.
  client_address  text CHECK (length(client_address) <= 100),
  action          text NOT NULL CHECK (action ~ '^[a-z_]+\.[a-z_]+$'),
  target_id       text,
  before          jsonb,
  after           jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  CHECK (actor_kind IN ('member', 'operator') = (actor_id IS NOT NULL))
);
-- The portal's list of one organization and the console's list of all, newest first, keyset-paginated (AUDIT-6,
-- AUDIT-7); filters by action and actor within an organization have their own index ending in the list's order.
-- Every key ends in the row's id, so none holds equal keys: deduplication off, as in migration 098.
CREATE INDEX audit_log_organization_recent ON audit_log (organization_id, created_at DESC, id DESC)
  WITH (deduplicate_items = off);
CREATE INDEX audit_log_organization_action_recent ON audit_log (organization_id, action, created_at DESC, id DESC)
  WITH (deduplicate_items = off);
CREATE INDEX audit_log_organization_actor_recent
  ON audit_log (organization_id, lower(actor_label), created_at DESC, id DESC) WITH (deduplicate_items = off);
CREATE INDEX audit_log_recent ON audit_log (created_at DESC, id DESC) WITH (deduplicate_items = off);
