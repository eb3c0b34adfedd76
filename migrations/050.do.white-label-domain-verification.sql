-- A white-label domain takes effect only after its organization proves control of it with a DNS TXT record
-- holding a random challenge token. The requested domain is kept with its token; only verified domains must be
-- unique, so an organization that merely claims another's domain can never block its real owner, and no two
-- organizations can ever hold the same domain in effect.
ALTER TABLE organizations DROP CONSTRAINT IF EXISTS organizations_white_label_domain_key;
ALTER TABLE organizations
  ADD COLUMN white_label_domain_token       text,
  ADD COLUMN white_label_domain_verified_at timestamptz;
CREATE UNIQUE INDEX organizations_verified_white_label_domain ON organizations (white_label_domain)
  WHERE white_label_domain_verified_at IS NOT NULL;
CREATE INDEX organizations_white_label_domain ON organizations (white_label_domain);
-- Domains set before verification existed could have been set with a test key, so none is trusted: each waits
-- for its TXT record (or an operator's `org set-domain --verified`) under a fresh random token.
UPDATE organizations
   SET white_label_domain_token = replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '')
 WHERE white_label_domain IS NOT NULL;
ALTER TABLE organizations ADD CONSTRAINT organizations_white_label_domain_token
  CHECK (white_label_domain IS NULL OR white_label_domain_token IS NOT NULL);

-- The host a magic link was issued for (the white-label domain, or the host of the default dashboard address);
-- opening it on any other host is refused. Links issued before this column existed point at the domain their
-- organization had then, or at the default dashboard address (NULL).
ALTER TABLE magic_links ADD COLUMN host text;
UPDATE magic_links l SET host = o.white_label_domain
  FROM organizations o WHERE o.id = l.organization_id AND o.white_label_domain IS NOT NULL AND l.used_at IS NULL;
