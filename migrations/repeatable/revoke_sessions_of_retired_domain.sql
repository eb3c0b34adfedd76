-- A white-label domain an organization removes or replaces (PATCH /organization, the portal, the console, the CLI)
-- ends at once every dashboard session started from a magic link issued for it (ORG-6, AUTH-6): the domain's next
-- owner would receive those browsers' cookies, and each would still open the dashboard on our own host. In the
-- database, so that every way the column changes does it in the same transaction. A domain the daily re-check takes
-- out of use keeps its name (only its verification goes), and that job revokes the sessions itself.
CREATE OR REPLACE FUNCTION revoke_sessions_of_retired_domain() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE dashboard_sessions s SET revoked_at = now()
    FROM magic_links l
   WHERE s.organization_id = OLD.id AND s.revoked_at IS NULL AND l.id = s.magic_link_id
     AND l.host = OLD.white_label_domain;
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER organizations_white_label_domain_retired
  AFTER UPDATE OF white_label_domain ON organizations
  FOR EACH ROW
  WHEN (OLD.white_label_domain IS NOT NULL AND OLD.white_label_domain IS DISTINCT FROM NEW.white_label_domain)
  EXECUTE FUNCTION revoke_sessions_of_retired_domain();
