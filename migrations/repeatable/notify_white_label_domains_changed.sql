-- Verified white-label domains are kept in each process's memory (DASH-1, ORG-4, ORG-6): any change to which domain is
-- verified for whom tells every process to read the list again (NOTIFY white_label_domains_changed '*'). Domains
-- change rarely (an integrator's or operator's setting, the daily re-check), so a NOTIFY in those transactions costs
-- nothing that matters (OPS-5); other updates of organizations notify nothing.
CREATE OR REPLACE FUNCTION notify_white_label_domains_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('white_label_domains_changed', '*');
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER organizations_white_label_domain_changed
  AFTER UPDATE OF white_label_domain, white_label_domain_verified_at ON organizations
  FOR EACH ROW
  WHEN ((OLD.white_label_domain_verified_at IS NOT NULL OR NEW.white_label_domain_verified_at IS NOT NULL)
        AND (OLD.white_label_domain IS DISTINCT FROM NEW.white_label_domain
             OR OLD.white_label_domain_verified_at IS DISTINCT FROM NEW.white_label_domain_verified_at))
  EXECUTE FUNCTION notify_white_label_domains_changed();
CREATE OR REPLACE TRIGGER organizations_white_label_domain_inserted
  AFTER INSERT ON organizations
  FOR EACH ROW WHEN (NEW.white_label_domain_verified_at IS NOT NULL)
  EXECUTE FUNCTION notify_white_label_domains_changed();
CREATE OR REPLACE TRIGGER organizations_white_label_domain_deleted
  AFTER DELETE ON organizations
  FOR EACH ROW WHEN (OLD.white_label_domain_verified_at IS NOT NULL)
  EXECUTE FUNCTION notify_white_label_domains_changed();
CREATE OR REPLACE TRIGGER organizations_truncated
  AFTER TRUNCATE ON organizations
  FOR EACH STATEMENT EXECUTE FUNCTION notify_white_label_domains_changed();
