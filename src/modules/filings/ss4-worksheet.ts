import { LLC_TITLES } from '../companies/company-rules.js';

/*
 * The IRS Form SS-4 worksheet of an EIN order (ORD-EIN-7): every line of the form with the value the order carries,
 * or '' where it carries none, so the filing team copies it into the IRS online assistant, or onto the form it faxes
 * or mails. Built from the order's details (the `ein` object, orders/ein.schemas.ts) and its company record; line 7b
 * is the revealed tax id, so a worksheet exists only on the page (or CLI output) of a recorded reveal. Pure: no
 * database.
 */

/** One line of the worksheet: the SS-4 line number, its caption, the value ('' when the order has none). */
export interface Ss4Line {
  line: string;
  label: string;
  value: string;
}

/** What the worksheet reads: the order's details and its company row (snake_case columns, as stored). */
export interface Ss4Source {
  details: Record<string, unknown>;
  company: Record<string, unknown>;
}

type Obj = Record<string, unknown>;

const REASONS: Record<string, string> = {
  started_new_business: 'Started new business',
  hired_employees: 'Hired employees',
  banking_purpose: 'Banking purpose',
  changed_type_of_organization: 'Changed type of organization',
  purchased_going_business: 'Purchased going business',
  created_trust: 'Created a trust',
  created_pension_plan: 'Created a pension plan',
  other: 'Other',
};

const ACTIVITIES: Record<string, string> = {
  construction: 'Construction',
  rental_and_leasing: 'Rental & leasing',
  transportation_and_warehousing: 'Transportation & warehousing',
  health_care_and_social_assistance: 'Health care & social assistance',
  accommodation_and_food_service: 'Accommodation & food service',
  wholesale_agent_broker: 'Wholesale-agent/broker',
  wholesale_other: 'Wholesale-other',
  retail: 'Retail',
  real_estate: 'Real estate',
  manufacturing: 'Manufacturing',
  finance_and_insurance: 'Finance & insurance',
  other: 'Other',
};

const MEMBER_TITLES: ReadonlySet<string> = new Set(LLC_TITLES.filter((t) => t.includes('Member')));

const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');
const yesNo = (v: boolean): string => (v ? 'Yes' : 'No');

/** '1209 Orange Street, Suite 2' and 'Wilmington, DE 19801' (plus the country when not US) of an address. */
function addressLines(a: Obj): [string, string] {
  const street = [str(a.line1), str(a.line2)].filter(Boolean).join(', ');
  const city = [str(a.city), [str(a.state), str(a.postalCode)].filter(Boolean).join(' ')].filter(Boolean).join(', ');
  const country = str(a.country) && str(a.country) !== 'US' ? `, ${str(a.country)}` : '';
  return [street, city ? `${city}${country}` : ''];
}

function sameAddress(a: Obj, b: Obj): boolean {
  return JSON.stringify(addressLines(a)) === JSON.stringify(addressLines(b));
}

/** Members of an LLC as its officers of record say: those titled Member or Managing Member. */
function llcMembers(company: Obj): number {
  const officers = Array.isArray(company.officers) ? (company.officers as unknown[]) : [];
  return officers.filter((o) => MEMBER_TITLES.has(str(obj(o).title))).length;
}

/** Line 9a: the entity type box, from the company's type, tax election and (LLC) number of members. */
function entityType(company: Obj): string {
  if (company.entity_type === 'CORP') {
    const form = company.tax_election === 'S Corporation' ? '1120-S' : '1120';
    return `Corporation (form number to be filed: ${form})`;
  }
  if (company.entity_type !== 'LLC') return '';
  const members = llcMembers(company);
  if (members === 1) return 'Other: disregarded entity (single-member LLC)';
  return members > 1 ? 'Partnership (multi-member LLC)' : '';
}

function withOther(label: string | undefined, other: unknown): string {
  if (!label) return '';
  return label === 'Other' && str(other) ? `Other: ${str(other)}` : label;
}

/**
 * The SS-4 lines of an EIN order with its revealed tax id (`taxId`, 123-45-6789), in form order: 1 to 18 and the
 * third-party designee section. Values the order does not carry (line 3, the county of line 6, the designee) are ''.
 */
export function ss4Worksheet(source: Ss4Source, taxId: string): Ss4Line[] {
  const ein = source.details;
  const c = source.company;
  const party = obj(ein.responsibleParty);
  const mailing = obj(c.mailing_address);
  const street = obj(c.principal_address);
  const [mail1, mail2] = addressLines(mailing);
  const [street1, street2] = sameAddress(street, mailing) ? ['', ''] : addressLines(street);
  const isLlc = c.entity_type === 'LLC';
  const employees = obj(ein.employees);
  const count = (k: string) => str(employees[k] ?? 0);
  const activity = withOther(ACTIVITIES[str(ein.principalActivity)], ein.principalActivityOther);
  const previous = str(ein.previousEin);
  const name = [party.firstName, party.middleName, party.lastName].map(str).filter(Boolean).join(' ');
  const taxIdType = str(party.taxIdType);
  return [
    { line: '1', label: 'Legal name of entity', value: str(c.legal_name) },
    { line: '2', label: 'Trade name of business (if different from line 1)', value: str(c.trade_name) },
    { line: '3', label: 'Executor, administrator, trustee, "care of" name', value: '' },
    { line: '4a', label: 'Mailing address (room, apt., suite no. and street, or P.O. box)', value: mail1 },
    { line: '4b', label: 'City, state, and ZIP code (mailing address)', value: mail2 },
    { line: '5a', label: 'Street address (if different from line 4a; no P.O. box)', value: street1 },
    { line: '5b', label: 'City, state, and ZIP code (street address, if different)', value: street2 },
    {
      line: '6',
      label: 'County and state where principal business is located',
      value: str(street.state ?? mailing.state),
    },
    { line: '7a', label: 'Name of responsible party', value: name },
    {
      line: '7b',
      label: `SSN, ITIN, or EIN of the responsible party${taxIdType ? ` (${taxIdType})` : ''}`,
      value: taxId,
    },
    { line: '8a', label: 'Is this application for a limited liability company (LLC)?', value: yesNo(isLlc) },
    {
      line: '8b',
      label: 'If 8a is "Yes", the number of LLC members',
      value: isLlc && llcMembers(c) ? String(llcMembers(c)) : '',
    },
    { line: '8c', label: 'If 8a is "Yes", was the LLC organized in the United States?', value: isLlc ? 'Yes' : '' },
    { line: '9a', label: 'Type of entity', value: entityType(c) },
    {
      line: '9b',
      label: 'If a corporation, the state or foreign country where incorporated',
      value: c.entity_type === 'CORP' ? str(c.formation_state) : '',
    },
    {
      line: '10',
      label: 'Reason for applying',
      value: withOther(REASONS[str(ein.reasonForApplying)], ein.reasonForApplyingOther),
    },
    { line: '11', label: 'Date business started or acquired', value: str(ein.businessStartDate ?? c.formation_date) },
    { line: '12', label: 'Closing month of accounting year', value: str(c.fiscal_end_month) },
    {
      line: '13',
      label: 'Highest number of employees expected in the next 12 months',
      value: `Agricultural ${count('agricultural')}, Household ${count('household')}, Other ${count('other')}`,
    },
    {
      line: '14',
      label: 'Employment tax liability of $1,000 or less in a full calendar year (Form 944)',
      value: yesNo(ein.expectsEmploymentTaxUnder1000 === true),
    },
    { line: '15', label: 'First date wages or annuities were paid', value: str(ein.firstWagesDate) },
    { line: '16', label: 'Principal activity of the business', value: activity },
    {
      line: '17',
      label: 'Principal line of merchandise sold, construction work done, products produced, or services provided',
      value: str(ein.principalProductOrService),
    },
    {
      line: '18',
      label: 'Has the applicant entity ever applied for and received an EIN?',
      value: previous ? `Yes, previous EIN ${previous}` : 'No',
    },
    { line: 'Designee', label: "Third party designee: designee's name", value: '' },
    { line: 'Designee', label: "Third party designee: designee's telephone number", value: '' },
    { line: 'Designee', label: 'Third party designee: address and ZIP code', value: '' },
    { line: 'Designee', label: "Third party designee: designee's fax number", value: '' },
  ];
}
