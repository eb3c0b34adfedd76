-- Verified white-label domains are kept in each process's memory and re-checked daily (DASH-1, ORG-4, ORG-6).
--
-- 1. `white_label_domain_vouched`: the domain was put in effect by an operator vouching for it (console, CLI
--    `org set-domain --verified`), not by its DNS record, so the daily re-check leaves it alone. Domains verified
--    before this migration cannot tell which way they were: they count as verified by DNS and are re-checked, so a
--    vouched one whose record was never published is taken out of use at the first check and its organization told
--    (an operator vouches for it again).
-- 2. `white_label_domain_lapsed_at`: when the daily re-check found the domain's TXT record gone and took the domain
--    out of use (it is pending again with the same record to publish); cleared when a domain is verified or changed.
ALTER TABLE organizations
  ADD COLUMN white_label_domain_vouched boolean NOT NULL DEFAULT false,
  ADD COLUMN white_label_domain_lapsed_at timestamptz;

-- 3. Any change to which domain is verified for whom tells every process to read the list again (payload '*').
--    Domains change rarely (an integrator's or operator's setting, the daily re-check), so a NOTIFY in those
--    transactions costs nothing that matters (OPS-5); other updates of organizations do not notify.
CREATE FUNCTION notify_white_label_domains_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('white_label_domains_changed', '*');
  RETURN NULL;
END
$$;
CREATE TRIGGER organizations_white_label_domain_changed
  AFTER UPDATE OF white_label_domain, white_label_domain_verified_at ON organizations
  FOR EACH ROW
  WHEN ((OLD.white_label_domain_verified_at IS NOT NULL OR NEW.white_label_domain_verified_at IS NOT NULL)
        AND (OLD.white_label_domain IS DISTINCT FROM NEW.white_label_domain
             OR OLD.white_label_domain_verified_at IS DISTINCT FROM NEW.white_label_domain_verified_at))
  EXECUTE FUNCTION notify_white_label_domains_changed();
CREATE TRIGGER organizations_white_label_domain_inserted
  AFTER INSERT ON organizations
  FOR EACH ROW WHEN (NEW.white_label_domain_verified_at IS NOT NULL)
  EXECUTE FUNCTION notify_white_label_domains_changed();
CREATE TRIGGER organizations_white_label_domain_deleted
  AFTER DELETE ON organizations
  FOR EACH ROW WHEN (OLD.white_label_domain_verified_at IS NOT NULL)
  EXECUTE FUNCTION notify_white_label_domains_changed();
CREATE TRIGGER organizations_truncated
  AFTER TRUNCATE ON organizations
  FOR EACH STATEMENT EXECUTE FUNCTION notify_white_label_domains_changed();
