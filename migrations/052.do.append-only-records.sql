-- Ledger entries, order status history and events are records of what happened: they are only ever added to.
-- The database itself refuses to change or remove them (a reversal is a new ledger entry), so no code path, bug
-- or hand-typed statement can rewrite money or history. Statement-level triggers also catch TRUNCATE.
CREATE FUNCTION refuse_append_only_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only: % is not allowed (add a correcting row instead)', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'restrict_violation';
END
$$;

CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
CREATE TRIGGER order_status_history_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON order_status_history
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
