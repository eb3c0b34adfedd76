-- The role the service's connections act as (SEC-3): it may read and write rows, never change the schema, and
-- only add to the append-only records. Migrations keep running as the connecting user (the owner), which is
-- made a member so its connections can SET ROLE to it. NOLOGIN: nobody signs in as it. Roles belong to the
-- whole server, so a second database on the same server finds it already there. The grants on the tables
-- themselves are applied after every migration run (src/lib/service-role.ts), so later tables get them too.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fcs_service') THEN
    CREATE ROLE fcs_service NOLOGIN;
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
  NULL; -- created meanwhile by a migration of another database on this server
END
$$;

GRANT fcs_service TO CURRENT_USER;
