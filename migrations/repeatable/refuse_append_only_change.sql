-- Records of what happened are only ever added to (BILL-13, CAL-22, CAL-30, PAY-4, ORD-EIN-7, AUDIT-4): the database refuses
-- to change or remove them for every role, the owner's too (a reversal is a new ledger entry, a payment's new status a
-- new payment_statuses row), so no code path, bug or hand-typed statement can rewrite money or history. Statement-level
-- triggers also catch TRUNCATE. A new append-only table gets its trigger here.
CREATE OR REPLACE FUNCTION refuse_append_only_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only: % is not allowed (add a correcting row instead)', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'restrict_violation';
END
$$;

CREATE OR REPLACE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
CREATE OR REPLACE TRIGGER order_status_history_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON order_status_history
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
CREATE OR REPLACE TRIGGER events_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
CREATE OR REPLACE TRIGGER compliance_rule_changes_append_only
  BEFORE UPDATE OR DELETE OR TRUNCATE ON compliance_rule_changes
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
CREATE OR REPLACE TRIGGER company_calendar_override_changes_append_only
  BEFORE UPDATE OR DELETE OR TRUNCATE ON company_calendar_override_changes
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
CREATE OR REPLACE TRIGGER payments_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON payments
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
CREATE OR REPLACE TRIGGER payment_statuses_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON payment_statuses
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
CREATE OR REPLACE TRIGGER payment_provider_events_append_only
  BEFORE UPDATE OR DELETE OR TRUNCATE ON payment_provider_events
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
CREATE OR REPLACE TRIGGER tax_id_reveals_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON tax_id_reveals
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
CREATE OR REPLACE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
