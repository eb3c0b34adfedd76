import { Type } from '@sinclair/typebox';
import { ListOf, Nullable, PageQuery } from '../../lib/schemas.js';
import { FORMATION_STATES } from '../companies/company-rules.js';

const IsoDate = (description: string) =>
  Type.String({ format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$', minLength: 10, maxLength: 10, description });

// The calendar statuses (CAL-16).
const statusSchema = (description: string) =>
  Type.Union([Type.Literal('upcoming'), Type.Literal('open'), Type.Literal('overdue'), Type.Literal('filed')], {
    description,
  });

const itemFields = {
  id: Type.String({
    maxLength: 80,
    description:
      'prefix dl_; stable for the same company, jurisdiction, kind and due date, and sorts like the list (use it as startingAfter).',
  }),
  jurisdiction: Type.String({
    minLength: 2,
    maxLength: 2,
    description:
      'Two-letter code: the formation state, or a state the company is qualified in through a filed foreign qualification.',
  }),
  presence: Type.Union([Type.Literal('domestic'), Type.Literal('foreign')], {
    description: 'domestic in the formation state, foreign where qualified.',
  }),
  kind: Type.Union([Type.Literal('annual_report'), Type.Literal('initial_report'), Type.Literal('estimated_tax')], {
    description:
      'annual_report: the regular annual or biennial report; initial_report: the one-time report some states require soon after formation or registration; estimated_tax: an estimated tax instalment (Delaware corporations flagged as owing $5,000 or more: June 1, September 1, December 1).',
  }),
  reportName: Type.String({ maxLength: 200, description: "The state's name for the filing." }),
  dueDate: IsoDate(
    "Last day to file on time (YYYY-MM-DD): the statutory date, moved to the next business day when it falls on a weekend day or a holiday of the state's list and the state's rule moves such dates (see statutoryDueDate). Status and reminders use this date.",
  ),
  statutoryDueDate: IsoDate(
    "The date the state's rule gives (YYYY-MM-DD) before any weekend or holiday adjustment; equals dueDate unless the state moves a due date on a weekend or holiday to the next business day.",
  ),
  dueDateNote: Nullable(
    Type.String({
      maxLength: 300,
      description: 'Why dueDate differs from statutoryDueDate; null when they are the same day.',
    }),
  ),
  windowOpensOn: Nullable(
    IsoDate(
      'First day the state accepts the filing (YYYY-MM-DD), or null when the rules give none. The item is open only from this day to dueDate, and no reminder comes before it.',
    ),
  ),
  filingYear: Type.Integer({
    description: 'The year of the due date: the annualReport.filingYear of an order for it.',
  }),
  status: statusSchema(
    'filed: an annual report order covering this jurisdiction and filingYear was filed; overdue: past dueDate; open: inside the filing window (windowOpensOn to dueDate); upcoming: before the window opens, or no window is known.',
  ),
  confidence: Type.Union([Type.Literal('high'), Type.Literal('medium'), Type.Literal('low')], {
    description:
      'How well the rule is sourced: high = official page or statute; medium = reputable secondary sources; low = inferred or conflicting.',
  }),
  sourceUrl: Nullable(
    Type.String({ maxLength: 2000, description: 'Where the rule comes from (official or statute first).' }),
  ),
  estimatedStateFee: Nullable(
    Type.Number({
      description:
        "The state's annual report fee for the company's entity type in dollars, from our state fee schedule; null for initial reports. Informational: late fees and taxes are not included.",
    }),
  ),
  orderable: Type.Boolean({
    description:
      'True when our annual report product covers it: order it with POST /orders {annualReport: {filingYear}} in this filingState.',
  }),
  orderId: Nullable(
    Type.String({
      maxLength: 100,
      description: 'The annual report order covering it: filed, or submitted/pending. null when none.',
    }),
  ),
  coveredByPendingOrder: Type.Boolean({
    description: 'True while a covering annual report order is submitted or pending (no reminders are sent).',
  }),
  note: Nullable(
    Type.String({
      maxLength: 500,
      description: 'Caveats: a date or year the state assigns, an election the company may have made.',
    }),
  ),
};

/** One item of GET /companies/{id}/compliance-calendar. */
const CalendarItemSchema = Type.Object(itemFields, {
  title: 'ComplianceCalendarItem',
  additionalProperties: false,
});

/** Answer of GET /companies/{companyIdOrSlug}/compliance-calendar. */
export const CalendarSchema = Type.Object(
  {
    companyId: Type.String({ maxLength: 100, description: 'prefix comp_' }),
    from: IsoDate('Start of the range (inclusive).'),
    to: IsoDate('End of the range (inclusive).'),
    items: Type.Array(CalendarItemSchema, { description: 'Sorted by dueDate.' }),
  },
  { title: 'ComplianceCalendar', additionalProperties: false },
);

/** One item of GET /compliance-deadlines: a calendar item with its company. */
const DeadlineSchema = Type.Object(
  {
    ...itemFields,
    companyId: Type.String({ maxLength: 100, description: 'prefix comp_' }),
  },
  { title: 'ComplianceDeadline', additionalProperties: false },
);

/** A page of deadlines, by due date. */
export const DeadlineList = ListOf(DeadlineSchema);

const RangeFields = {
  from: Type.Optional(IsoDate('Start of the range of due dates (inclusive). Default: today (UTC).')),
  to: Type.Optional(
    IsoDate('End of the range (inclusive), at most 1830 days after from. Default: 18 months after from.'),
  ),
};

/** Query of GET /companies/{id}/compliance-calendar. */
export const CalendarQuery = Type.Object(RangeFields, { additionalProperties: false });

/** Path of GET /companies/{companyIdOrSlug}/compliance-calendar. */
export const CalendarParams = Type.Object({ companyIdOrSlug: Type.String({ minLength: 1, maxLength: 200 }) });

/** Query of GET /compliance-deadlines: range, filters, keyset pagination. */
export const DeadlinesQuery = Type.Composite(
  [
    PageQuery,
    Type.Object({
      ...RangeFields,
      jurisdiction: Type.Optional(
        Type.String({ enum: [...FORMATION_STATES], description: 'Only this jurisdiction (two-letter code).' }),
      ),
      status: Type.Optional(statusSchema('Only items with this status.')),
    }),
  ],
  { additionalProperties: false },
);

/** Body of POST /test_helpers/compliance-reminders/run. */
export const RunRemindersBody = Type.Object(
  {
    asOf: IsoDate('Run the daily reminder job as if today were this date (YYYY-MM-DD).'),
  },
  { additionalProperties: false },
);

/** Answer of POST /test_helpers/compliance-reminders/run: the events the run emitted. */
export const RunRemindersResult = Type.Object(
  {
    asOf: IsoDate('The date the run used.'),
    emitted: Type.Array(
      Type.Object(
        {
          eventId: Type.String({ maxLength: 100, description: 'prefix evt_' }),
          type: Type.String({
            maxLength: 100,
            description: 'compliance.deadline_approaching or compliance.deadline_missed',
          }),
          companyId: Type.String({ maxLength: 100 }),
          jurisdiction: Type.String({ maxLength: 2 }),
          kind: Type.String({ maxLength: 20 }),
          dueDate: IsoDate('Due date of the obligation.'),
          daysUntilDue: Type.Integer({ description: 'Negative after the due date.' }),
        },
        { additionalProperties: false },
      ),
      {
        description: 'Events emitted by this run; an obligation and threshold already reminded is never emitted again.',
      },
    ),
  },
  { title: 'ComplianceReminderRun', additionalProperties: false },
);

/** Path `{state}` of /admin/v1/compliance-rules/{state}. */
export const RuleStateParams = Type.Object({ state: Type.String({ minLength: 2, maxLength: 2 }) });

/** Body of PUT /admin/v1/compliance-rules/{state}: fields of `llc`/`corporation` merge over the stored rule. */
export const RuleUpdateBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    confidence: Type.Optional(Type.Union([Type.Literal('high'), Type.Literal('medium'), Type.Literal('low')])),
    llc: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description:
            'Fields of the LLC rule to replace (frequency, reportName, ruleKind, params, biennialCycle, firstReport, initialReport, foreign, sources, confidence …).',
        },
      ),
    ),
    corporation: Type.Optional(
      Type.Object({}, { additionalProperties: true, description: 'Fields of the corporation rule to replace.' }),
    ),
    weekendRule: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description:
            'Replaces the weekend and holiday rule: {rule: next_business_day | not_adjusted, holidays: federal | state, basis, sources, checkedOn, note} (CAL-24).',
        },
      ),
    ),
    note: Type.Optional(Type.String({ maxLength: 500, description: 'Why: kept in the change log.' })),
  },
  { additionalProperties: false },
);

/** Params of PUT /admin/v1/companies/{companyId}/calendar-overrides/{state}. */
export const OverrideParams = Type.Object({
  companyId: Type.String({ pattern: '^comp_', maxLength: 100 }),
  state: Type.String({ minLength: 2, maxLength: 2 }),
});

/** Body of PUT /admin/v1/companies/{companyId}/calendar-overrides/{state} (CAL-29, CAL-32). */
export const OverrideBody = Type.Object(
  {
    anchorDate: Type.Optional(
      Nullable(
        IsoDate(
          "The date the calendar counts from in this state instead of the formation or registration date (a reinstatement, a conversion, a foreign entity's first day of business); null to go back to it.",
        ),
      ),
    ),
    anchorReason: Type.Optional(
      Type.Union(
        [
          Type.Literal('reinstatement'),
          Type.Literal('conversion'),
          Type.Literal('first_day_of_business'),
          Type.Literal('correction'),
        ],
        { description: 'Required with an anchorDate.' },
      ),
    ),
    estimatedTax: Type.Optional(
      Type.Boolean({ description: "The company pays the state's estimated tax instalments (Delaware corporations)." }),
    ),
    note: Type.String({ minLength: 1, maxLength: 500, description: 'Why: kept in the change log.' }),
  },
  { additionalProperties: false },
);

/** Query of GET /admin/v1/compliance-rules/changes. */
export const RuleChangesQuery = Type.Object(
  {
    state: Type.Optional(Type.String({ minLength: 2, maxLength: 2 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  },
  { additionalProperties: false },
);
