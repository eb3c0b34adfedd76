-- GET /events/stream: events in commit order, and a wake-up when new ones commit.
--
-- Event ids are time-sortable but assigned before commit: a transaction that took its id first can commit after
-- one that took a later id, so a stream that remembered "the last id sent" would skip it for ever. xact_id is the
-- id of the inserting transaction. A reader that goes in (xact_id, id) order and only passes rows whose xact_id is
-- below every transaction still running that could write events (at most pg_snapshot_xmin(pg_current_snapshot()))
-- never sees a row appear behind its position later. Existing rows all get this migration's transaction id.
ALTER TABLE events ADD COLUMN xact_id xid8 NOT NULL DEFAULT pg_current_xact_id();

CREATE INDEX events_stream ON events (organization_id, environment, xact_id, id);

-- One notification per INSERT statement (not per row), naming the tenants ('org_…:live') that got events;
-- delivered when the transaction commits, so a woken stream finds the rows. NOTIFY payloads are limited to
-- 8000 bytes: a longer list sends '*' (wake every stream) instead.
CREATE FUNCTION notify_events_inserted() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  tenants text;
BEGIN
  SELECT string_agg(DISTINCT organization_id || ':' || environment, ',') INTO tenants FROM inserted;
  IF tenants IS NOT NULL THEN
    PERFORM pg_notify('events_inserted', CASE WHEN length(tenants) < 7900 THEN tenants ELSE '*' END);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER events_notify_inserted
  AFTER INSERT ON events
  REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION notify_events_inserted();
