import type { TenantPrice, ProductType } from '../billing/pricing.js';
import { FORMATION_STATES } from '../companies/company-rules.js';
import type { CompanyRow } from './dashboard.repo.js';
import {
  einSections,
  formationCompanySections,
  suppliedAgentSection,
  type Option,
  type Section,
  STATE_OPTIONS,
} from './checkout.fields.js';
import { bodyFromForm, getPath, setPath, type FormValues } from './checkout.forms.js';

/*
 * The products of the dashboard checkout (DASH-4): formation packages tier 1-3 (a new
 * company), and for an existing company EIN, annual report, registered agent, foreign qualification and
 * certificate of good standing. Each product knows its options (chosen before the form, because they change
 * the price), its form sections and how the form becomes a POST /orders body.
 */

/** A checkout product as it appears in dashboard URLs (DASH-4: every product the dashboard sells). */
export type ProductKey =
  | 'formation'
  | 'ein'
  | 'annual-report'
  | 'registered-agent'
  | 'foreign-qualification'
  | 'certificate-of-good-standing';

/** The products sold for an existing company, in display order (formation makes a new company). */
export const COMPANY_PRODUCTS: ProductKey[] = [
  'ein',
  'annual-report',
  'registered-agent',
  'foreign-qualification',
  'certificate-of-good-standing',
];

/** Choices that change the price; chosen first (query string), then carried as hidden fields. */
export interface CheckoutOptions {
  filingState: string;
  tier: 1 | 2 | 3;
  entityType: 'LLC' | 'CORP';
  filingYear: number;
  /** Foreign qualification: order registered agent service in the state, or supply an agent. */
  agent: 'order' | 'supply';
  changeOfAgent: boolean;
}

/** What the product page shows: title, blurb, the price types summed for the displayed price, and what is included. */
export interface ProductInfo {
  key: ProductKey;
  title: string;
  blurb: string;
  /** Price types whose retail sum is the displayed price (BILL-11: tier + registered_agent for tiers 2-3). */
  priceTypes: ProductType[];
  /** Price is followed by this note, e.g. '+ state fee' or 'per year'. */
  priceNote: string;
  includes: string[];
}

/** Display data of every product but formation (formation packages come from tierInfo). */
export const PRODUCT_INFO: Record<Exclude<ProductKey, 'formation'>, ProductInfo> = {
  ein: {
    key: 'ein',
    title: 'EIN (federal tax ID)',
    blurb: 'We apply to the IRS for your Employer Identification Number.',
    priceTypes: ['ein'],
    priceNote: 'one time',
    includes: ['IRS Form SS-4 application', 'EIN confirmation letter'],
  },
  'annual-report': {
    key: 'annual-report',
    title: 'Annual report',
    blurb: 'Stay in good standing: we file your state annual report.',
    priceTypes: ['annual_report'],
    priceNote: '+ state fee',
    includes: ['Prepared and filed with the state', 'Renews every year'],
  },
  'registered-agent': {
    key: 'registered-agent',
    title: 'Registered agent',
    blurb: 'A registered agent accepts legal mail for your company.',
    priceTypes: ['registered_agent'],
    priceNote: 'per year',
    includes: ['Registered address in the state', 'Mail scanned to your dashboard'],
  },
  'foreign-qualification': {
    key: 'foreign-qualification',
    title: 'Foreign qualification',
    blurb: 'Register your company to do business in another state.',
    priceTypes: ['foreign_qualification'],
    priceNote: '+ state fee',
    includes: ['Filed with the new state', 'Certificate of authority'],
  },
  'certificate-of-good-standing': {
    key: 'certificate-of-good-standing',
    title: 'Certificate of good standing',
    blurb: 'Official proof from the state that your company is in good standing.',
    priceTypes: ['certificate_of_good_standing'],
    priceNote: 'one time',
    includes: ['Ordered from the state', 'PDF in your documents'],
  },
};

/** Formation packages (BILL-11: tiers 2 and 3 add registered agent as its own subscription line). */
export function tierInfo(tier: 1 | 2 | 3): ProductInfo {
  const includes = [
    'State formation filing',
    tier === 1 ? 'You name your own registered agent' : 'Registered agent service, first year',
  ];
  if (tier >= 2) includes.push('EIN (federal tax ID)');
  if (tier === 3) includes.push('DBA (trade name) filing');
  return {
    key: 'formation',
    title: ['Starter', 'Standard', 'Complete'][tier - 1],
    blurb: [
      'Form your company.',
      'Form your company with an EIN and a registered agent.',
      'Everything in Standard, plus a DBA trade name.',
    ][tier - 1],
    priceTypes: tier === 1 ? ['formation_tier_1'] : [`formation_tier_${tier}` as ProductType, 'registered_agent'],
    priceNote: '+ state fee',
    includes,
  };
}

/** Retail price in cents shown for a product (BILL-11: sum of its price types, retail = retailAmount else defaultAmount). */
export function displayedRetailCents(info: ProductInfo, prices: Record<ProductType, TenantPrice>): number {
  return info.priceTypes.reduce((sum, type) => sum + prices[type].effectiveRetailCents, 0);
}

/** Narrowing guard for the product segment of a checkout URL. */
export function isProductKey(v: string): v is ProductKey {
  return v === 'formation' || (COMPANY_PRODUCTS as string[]).includes(v);
}

/**
 * Reads the price-changing options from a query string or form, with defaults from the company.
 * Unknown values fall back to defaults (the page then shows what will actually be ordered).
 */
export function readOptions(
  src: Record<string, unknown>,
  company: CompanyRow | null,
  enabledTiers: Array<1 | 2 | 3>,
  product?: ProductKey,
): CheckoutOptions {
  const str = (k: string) => (typeof src[k] === 'string' ? (src[k] as string) : '');
  let state = str('filingState').toUpperCase();
  // Foreign qualification is for another state than the formation state: default to the first other one.
  if (product === 'foreign-qualification' && (!state || state === company?.formation_state))
    state = FORMATION_STATES.find((s) => s !== company?.formation_state)!;
  const tier = Number(str('tier'));
  const year = Number(str('filingYear'));
  const thisYear = new Date().getUTCFullYear();
  return {
    filingState: (FORMATION_STATES as readonly string[]).includes(state) ? state : (company?.formation_state ?? 'DE'),
    tier: (enabledTiers as number[]).includes(tier) ? (tier as 1 | 2 | 3) : (enabledTiers[0] ?? 1),
    entityType: str('entityType') === 'CORP' ? 'CORP' : 'LLC',
    filingYear: year === thisYear + 1 ? year : thisYear,
    agent: str('agent') === 'supply' ? 'supply' : 'order',
    changeOfAgent: str('changeOfAgent') === 'true' || str('changeOfAgent') === 'on',
  };
}

/**
 * The options a checkout form was POSTED with (DASH-5, DASH-11): unlike {@link readOptions}, which fills a page with
 * defaults, a submitted value is never swapped for another one. A foreign qualification keeps the state it was sent
 * for, so that its formation state is refused (DASH-5), and a value the form never offers is a `problem`, shown on
 * the page again with nothing placed.
 */
export function readPostedOptions(
  src: Record<string, unknown>,
  company: CompanyRow | null,
  enabledTiers: Array<1 | 2 | 3>,
  product: ProductKey,
): { options: CheckoutOptions; problem: string | null } {
  const options = readOptions(src, company, enabledTiers, product);
  const thisYear = new Date().getUTCFullYear();
  const sent = (k: string) => (typeof src[k] === 'string' && src[k] !== '' ? (src[k] as string) : null);
  const state = sent('filingState')?.toUpperCase() ?? null;
  const offered: Array<[string, string | null, readonly string[]]> = [
    ['state', state, FORMATION_STATES],
    ['year', product === 'annual-report' ? sent('filingYear') : null, [thisYear, thisYear + 1].map(String)],
    ['company type', product === 'formation' ? sent('entityType') : null, ['LLC', 'CORP']],
    ['registered agent choice', product === 'foreign-qualification' ? sent('agent') : null, ['order', 'supply']],
  ];
  const bad = offered.filter(([, value, allowed]) => value !== null && !allowed.includes(value));
  if (state && !bad.some(([name]) => name === 'state')) options.filingState = state;
  const problem = bad.length
    ? `This form was sent with a ${bad.map(([name, value]) => `${name} we do not offer (${value!.slice(0, 40)})`).join(' and a ')}. Please choose again.`
    : null;
  return { options, problem };
}

/** Options as hidden fields / query parameters. */
export function optionPairs(product: ProductKey, o: CheckoutOptions): Array<[string, string]> {
  const pairs: Array<[string, string]> = [['filingState', o.filingState]];
  if (product === 'formation') pairs.push(['tier', String(o.tier)], ['entityType', o.entityType]);
  if (product === 'annual-report') pairs.push(['filingYear', String(o.filingYear)]);
  if (product === 'foreign-qualification') pairs.push(['agent', o.agent]);
  if (product === 'registered-agent') pairs.push(['changeOfAgent', String(o.changeOfAgent)]);
  return pairs;
}

/** The option pickers shown above a product form (a GET form: changing them re-prices the page). */
export function optionControls(
  product: ProductKey,
  o: CheckoutOptions,
  enabledTiers: Array<1 | 2 | 3>,
  company: CompanyRow | null,
) {
  const thisYear = new Date().getUTCFullYear();
  const controls: Array<{ name: string; label: string; options: Option[]; value: string }> = [];
  if (product === 'formation') {
    controls.push({
      name: 'tier',
      label: 'Package',
      value: String(o.tier),
      options: enabledTiers.map((t) => ({ value: String(t), label: tierInfo(t).title })),
    });
    controls.push({
      name: 'entityType',
      label: 'Company type',
      value: o.entityType,
      options: [
        { value: 'LLC', label: 'LLC' },
        { value: 'CORP', label: 'Corporation' },
      ],
    });
  }
  const stateLabel =
    product === 'formation'
      ? 'State of formation'
      : product === 'foreign-qualification'
        ? 'State to qualify in'
        : 'State';
  const states =
    product === 'foreign-qualification'
      ? STATE_OPTIONS.filter((s) => s.value !== company?.formation_state)
      : STATE_OPTIONS;
  controls.push({ name: 'filingState', label: stateLabel, value: o.filingState, options: states });
  if (product === 'annual-report')
    controls.push({
      name: 'filingYear',
      label: 'Report year',
      value: String(o.filingYear),
      options: [thisYear, thisYear + 1].map((y) => ({ value: String(y), label: String(y) })),
    });
  if (product === 'foreign-qualification')
    controls.push({
      name: 'agent',
      label: 'Registered agent in that state',
      value: o.agent,
      options: [
        { value: 'order', label: 'Add our registered agent service' },
        { value: 'supply', label: 'I have an agent there' },
      ],
    });
  if (product === 'registered-agent')
    controls.push({
      name: 'changeOfAgent',
      label: 'Appointment',
      value: String(o.changeOfAgent),
      options: [
        { value: 'false', label: 'New registered agent' },
        { value: 'true', label: 'Replace my current agent' },
      ],
    });
  return controls;
}

/** The form sections of a product (card fields are added by the page in customer billing). */
export function productSections(product: ProductKey, o: CheckoutOptions, activeAgentInState: boolean): Section[] {
  switch (product) {
    case 'formation': {
      const sections = formationCompanySections(o.entityType);
      if (o.tier === 1) sections.push(suppliedAgentSection('formation.registeredAgent', o.filingState));
      if (o.tier >= 2) sections.push(...einSections());
      if (o.tier === 3)
        sections.push({
          legend: 'DBA (trade name)',
          rows: [
            [
              {
                name: 'dbaName',
                label: 'Trade name to register',
                kind: 'text',
                required: true,
                hint: 'The name you will do business under.',
              },
            ],
          ],
        });
      return sections;
    }
    case 'ein':
      return einSections();
    case 'foreign-qualification':
      return o.agent === 'supply' && !activeAgentInState
        ? [suppliedAgentSection('foreignQualification.registeredAgent', o.filingState)]
        : [];
    default:
      return [];
  }
}

/**
 * Turns the submitted form into a POST /orders body plus the dashboard-only pricing options.
 * Fixed values the customer is not asked for are filled in here (US addresses, the officer's address,
 * the agent's state = filingState, tier 2-3 ordering registered agent service). `copies` lists the body paths filled
 * with a copy of the principal address: their errors are the principal address's own, shown there once.
 */
export function buildOrderBody(
  product: Exclude<ProductKey, 'certificate-of-good-standing'>,
  o: CheckoutOptions,
  form: FormValues,
  sections: Section[],
  userId: string,
  companyId: string | null,
  activeAgentInState: boolean,
) {
  const body: Record<string, unknown> = { userId, filingState: o.filingState, ...bodyFromForm(sections, form) };
  const copies: string[] = [];
  if (companyId) body.companyId = companyId;
  const dbaName = typeof body.dbaName === 'string' ? body.dbaName : undefined;
  delete body.dbaName;
  if (product === 'formation') {
    const c = 'formation.company';
    setPath(body, `${c}.entityType`, o.entityType);
    setPath(body, `${c}.principalAddress.country`, 'US');
    if (!getPath(body, `${c}.mailingAddress.line1`)) {
      setPath(body, `${c}.mailingAddress`, getPath(body, `${c}.principalAddress`));
      copies.push(`${c}.mailingAddress`);
    } else setPath(body, `${c}.mailingAddress.country`, 'US');
    setPath(body, `${c}.officers.0.type`, 'PERSON');
    setPath(body, `${c}.officers.0.isPrimary`, true);
    setPath(body, `${c}.officers.0.address`, getPath(body, `${c}.principalAddress`));
    copies.push(`${c}.officers.0.address`);
    if (o.tier === 1) agentFixed(body, 'formation.registeredAgent', o.filingState);
    else body.registeredAgent = { isChangeOfAgent: false };
  }
  if (product === 'annual-report') body.annualReport = { filingYear: o.filingYear };
  if (product === 'registered-agent') body.registeredAgent = { isChangeOfAgent: o.changeOfAgent };
  if (product === 'foreign-qualification') {
    if (o.agent === 'order' && !activeAgentInState) body.registeredAgent = { isChangeOfAgent: false };
    if (getPath(body, 'foreignQualification.registeredAgent'))
      agentFixed(body, 'foreignQualification.registeredAgent', o.filingState);
    else body.foreignQualification = true;
  }
  return { body, pricing: { formationTier: product === 'formation' ? o.tier : undefined, dbaName }, copies };
}

function agentFixed(body: Record<string, unknown>, prefix: string, state: string): void {
  setPath(body, `${prefix}.type`, 'PERSON');
  setPath(body, `${prefix}.addressState`, state);
}
