-- What an operator changes in one company's compliance calendar, per state (CAL-29, CAL-30, CAL-32): the date the
-- calendar counts from (a reinstatement, a conversion, a foreign entity's first day of business) and whether the
-- company pays estimated tax instalments. Each change is appended to company_calendar_override_changes with who made
-- it and why; that log is never changed.
CREATE TABLE company_calendar_overrides (
  company_id    text NOT NULL REFERENCES companies(id),
  state         text NOT NULL CHECK (state ~ '^[A-Z]{2}$'),
  anchor_date   date,
  anchor_reason text CHECK (anchor_reason IN ('reinstatement', 'conversion', 'first_day_of_business', 'correction')),
  estimated_tax boolean NOT NULL DEFAULT false,
  updated_at    timestamptz NOT NULL DEFAULT now(),
  updated_by    text NOT NULL,
  PRIMARY KEY (company_id, state),
  CHECK ((anchor_date IS NULL) = (anchor_reason IS NULL))
);

CREATE TABLE company_calendar_override_changes (
  id          bigserial PRIMARY KEY,
  company_id  text NOT NULL REFERENCES companies(id),
  state       text NOT NULL,
  changed_at  timestamptz NOT NULL DEFAULT now(),
  changed_by  text NOT NULL,
  note        text NOT NULL,
  before      jsonb,
  after       jsonb NOT NULL
);
CREATE INDEX company_calendar_override_changes_company ON company_calendar_override_changes (company_id, id DESC);
-- Its append-only trigger is in migrations/repeatable/refuse_append_only_change.sql.

-- Estimated tax instalments get reminders like reports (CAL-20, CAL-32).
ALTER TABLE compliance_reminders DROP CONSTRAINT compliance_reminders_kind_check;
ALTER TABLE compliance_reminders ADD CONSTRAINT compliance_reminders_kind_check
  CHECK (kind IN ('annual_report', 'initial_report', 'estimated_tax'));
