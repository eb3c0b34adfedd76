-- Every function and trigger has its current definition in one file of migrations/repeatable/ (one file per function,
-- with the triggers that call it), applied after the numbered migrations by src/lib/migrate.ts `applyRepeatables`
-- whenever those files, or the functions and triggers the database has, differ from what was last applied. A change
-- to a function is then a change of its file, and migrations/schema.sql shows the whole schema in one place.
--
-- `schema_repeatables`: what was last applied, one row. `files_sha256`: the files' names and text;
-- `catalog_md5`: the definitions of the database's functions and triggers right after (a numbered migration that
-- drops or changes one of them makes the next start apply the files again); `migration_version`: the newest numbered
-- migration of the version that applied them (an older version leaves them alone).
CREATE TABLE schema_repeatables (
  id                smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  files_sha256      text NOT NULL,
  catalog_md5       text NOT NULL,
  migration_version integer NOT NULL,
  applied_at        timestamptz NOT NULL DEFAULT now()
);

-- The placement statement reads its rows by name now (migrations/repeatable/place_order_groups_v2.sql), and so do
-- emit_events and post_ledger_entries. The placement function of the version before the rows became arrays goes:
-- no process calls it any more. Processes of the previous version, which send arrays, have their placements, events
-- and ledger postings refused until they are replaced (README, "Deploying").
DROP FUNCTION place_order_groups(jsonb);
