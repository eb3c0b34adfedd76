-- The partner portal's people (PORTAL-1 to PORTAL-9): members with a password and an optional second factor, their
-- roles in organizations, single-use invitations, password resets and browser sessions. Tokens and session ids are
-- kept only as their sha256; a member's TOTP secret only sealed under DATA_ENCRYPTION_KEY (the member id as
-- associated data, src/lib/secret-box.ts); recovery codes only as their sha256. The service role's grants on these
-- tables come from src/lib/service-role.ts, which runs after every migration.

CREATE TABLE members (
  id              text PRIMARY KEY,
  email           text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
  name            text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  password_hash   text NOT NULL,
  -- The authenticator secret: set (sealed) when enrolment starts, trusted once totp_enabled_at is set.
  totp_sealed     text CHECK (totp_sealed LIKE 'sealed:v1:%'),
  totp_enabled_at timestamptz,
  -- The 30-second step of the last code accepted: a code is never accepted twice (PORTAL-5).
  totp_last_step  bigint,
  created_at      timestamptz NOT NULL DEFAULT now(),
  disabled_at     timestamptz,
  CHECK (totp_enabled_at IS NULL OR totp_sealed IS NOT NULL)
);
CREATE UNIQUE INDEX members_email_lower ON members (lower(email));

CREATE TABLE member_recovery_codes (
  member_id  text NOT NULL REFERENCES members(id),
  code_hash  text NOT NULL,
  used_at    timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (member_id, code_hash)
);

CREATE TABLE organization_memberships (
  organization_id text NOT NULL REFERENCES organizations(id),
  member_id       text NOT NULL REFERENCES members(id),
  role            text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'viewer')),
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, member_id)
);
CREATE INDEX organization_memberships_member ON organization_memberships (member_id);

CREATE TABLE portal_invitations (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id),
  email           text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
  role            text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'viewer')),
  token_hash      text NOT NULL UNIQUE,
  -- 'operator' (admin API), 'cli', or 'member:<member id>'.
  invited_by      text NOT NULL,
  expires_at      timestamptz NOT NULL,
  accepted_at     timestamptz,
  -- Checked at commit: a newcomer's invitation is spent before the member it creates is inserted.
  accepted_by     text REFERENCES members(id) DEFERRABLE INITIALLY DEFERRED,
  created_at      timestamptz NOT NULL DEFAULT now(),
  CHECK ((accepted_at IS NULL) = (accepted_by IS NULL))
);
CREATE INDEX portal_invitations_organization ON portal_invitations (organization_id, created_at DESC);

CREATE TABLE portal_password_resets (
  id         text PRIMARY KEY,
  member_id  text NOT NULL REFERENCES members(id),
  token_hash text NOT NULL UNIQUE,
  expires_at timestamptz NOT NULL,
  used_at    timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX portal_password_resets_member ON portal_password_resets (member_id) WHERE used_at IS NULL;

CREATE TABLE portal_sessions (
  id_hash                text PRIMARY KEY,
  -- The short id shown in the session list and used to revoke one (never the session id itself).
  id                     text NOT NULL UNIQUE,
  member_id              text NOT NULL REFERENCES members(id),
  csrf_token             text NOT NULL,
  -- Signed in with the password only, the second factor still to come: such a session opens no page but that one.
  second_factor_pending  boolean NOT NULL,
  second_factor_at       timestamptz,
  organization_id        text REFERENCES organizations(id),
  environment            text NOT NULL DEFAULT 'test' CHECK (environment IN ('live', 'test')),
  client_address         text NOT NULL,
  user_agent             text NOT NULL DEFAULT '',
  created_at             timestamptz NOT NULL DEFAULT now(),
  last_seen_at           timestamptz NOT NULL DEFAULT now(),
  expires_at             timestamptz NOT NULL,
  revoked_at             timestamptz
);
CREATE INDEX portal_sessions_member ON portal_sessions (member_id, created_at DESC) WHERE revoked_at IS NULL;
