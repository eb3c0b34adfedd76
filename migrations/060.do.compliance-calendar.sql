-- The compliance calendar's rules (CAL-1): one row per jurisdiction, the shape of data/annual-report-due-dates.json
-- (name, confidence, llc, corporation). Seeded when missing; operators edit them, and every edit is kept in
-- compliance_rule_changes with who made it (CAL-22).
CREATE TABLE compliance_rules (
  state       text PRIMARY KEY CHECK (state ~ '^[A-Z]{2}$'),
  rule        jsonb NOT NULL CHECK (jsonb_typeof(rule) = 'object'),
  data_as_of  text NOT NULL,             -- the research date of the seeded data (asOf of the data file)
  updated_at  timestamptz NOT NULL DEFAULT now(),
  updated_by  text NOT NULL
);

CREATE TABLE compliance_rule_changes (
  id          bigserial PRIMARY KEY,
  state       text NOT NULL REFERENCES compliance_rules(state),
  changed_at  timestamptz NOT NULL DEFAULT now(),
  changed_by  text NOT NULL,
  note        text,
  before      jsonb NOT NULL,
  after       jsonb NOT NULL
);
CREATE INDEX compliance_rule_changes_state ON compliance_rule_changes (state, id DESC);
CREATE TRIGGER compliance_rule_changes_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON compliance_rule_changes
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();

-- Deadline reminders already emitted (CAL-20): one row per obligation and threshold, so a reminder is sent
-- exactly once however often the job runs, whichever worker runs it.
CREATE TABLE compliance_reminders (
  organization_id text NOT NULL REFERENCES organizations(id),
  environment     text NOT NULL CHECK (environment IN ('live', 'test')),
  company_id      text NOT NULL REFERENCES companies(id),
  jurisdiction    text NOT NULL,
  kind            text NOT NULL CHECK (kind IN ('annual_report', 'initial_report')),
  due_date        date NOT NULL,
  threshold       text NOT NULL CHECK (threshold IN ('60_days', '30_days', '7_days', 'missed')),
  event_id        text,                  -- the event emitted, set in the claiming transaction
  sent_at         timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (company_id, jurisdiction, kind, due_date, threshold)
);
CREATE INDEX compliance_reminders_tenant ON compliance_reminders (organization_id, environment, sent_at DESC);

-- Alabama repealed the corporate annual report from 2025 (data/state-fees.json was corrected): a schedule seeded
-- before the correction still says $10. Only an unedited seed row changes; an operator's own figure stays.
UPDATE state_fees
   SET corp_annual_report_cents = 0,
       updated_at = now(),
       updated_by = 'migration',
       source = jsonb_set(source, '{history}', COALESCE(source->'history', '[]'::jsonb) || jsonb_build_array(jsonb_build_object(
         'at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'by', 'migration',
         'changes', jsonb_build_object('corpAnnualReport', jsonb_build_object('from', corp_annual_report_cents / 100.0, 'to', 0)),
         'note', 'Alabama corporate annual report repealed (Act 2024-213), none due from 2025')))
 WHERE state = 'AL' AND updated_by = 'seed' AND corp_annual_report_cents <> 0;
