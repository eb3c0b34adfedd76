/**
 * Turns what an order request carried into display sections for the order page (CONS-3, ORD-EIN-6): company
 * with officers and addresses, the supplied agent, alternative names, EIN answers. Full SSNs/ITINs are never
 * rendered: any field named like one, and any value shaped like one, shows only its last four digits.
 */

import { missingAgentDetails } from '../orders/supplied-agent.js';

/** One row of a key/value table. */
export interface KvRow {
  label: string;
  value: string;
}

/** An officer or registered agent as the order page shows it: name, PERSON/COMPANY kind, title, one-line address. */
export interface PartySection {
  name: string;
  kind: string;
  title: string | null;
  primary: boolean;
  address: string;
}

/** What the order page shows of a request's product object. */
export interface RequestView {
  company: KvRow[];
  addresses: Array<{ label: string; lines: string }>;
  officers: PartySection[];
  agent: PartySection | null;
  /** ORD-RA-6: the details the supplied agent lacks (field names), flagged for the filing team; empty when none. */
  agentMissing: string[];
  alternativeNames: string[];
  answers: KvRow[];
  masked: unknown;
}

// The kind of number (`taxIdType`: SSN or ITIN) is not secret and the filing team needs it; the number is.
const SECRET_KEY = /^(?!.*type$).*(ssn|itin|social|tax_?id|tin$)/i;
const SSN_SHAPE = /^\d{3}-?\d{2}-?\d{4}$/;

/** Last four digits only: '•••-••-6789'. */
function maskSecret(value: unknown): string {
  const digits = String(value ?? '').replace(/\D/g, '');
  return digits.length >= 4 ? `•••-••-${digits.slice(-4)}` : '•••';
}

/** A deep copy with every SSN-like field or value masked (used for the raw request shown on the page). */
export function maskDeep(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => maskDeep(v, key));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, maskDeep(v, k)]));
  }
  if (
    (typeof value === 'string' || typeof value === 'number') &&
    (SECRET_KEY.test(key) || SSN_SHAPE.test(String(value)))
  )
    return maskSecret(value);
  return value;
}

/** 'line1, line2, City, ST 12345, US'. */
function formatAddress(a: unknown): string {
  if (!a || typeof a !== 'object') return '—';
  const x = a as Record<string, string | undefined>;
  const street = [x.line1 ?? x.addressStreet, x.line2].filter(Boolean).join(', ');
  const cityLine = [
    x.city ?? x.addressCity,
    [x.state ?? x.addressState, x.postalCode ?? x.addressZip].filter(Boolean).join(' '),
  ]
    .filter(Boolean)
    .join(', ');
  return [street, cityLine, x.country].filter(Boolean).join(', ') || '—';
}

function partyName(p: Record<string, unknown>): string {
  const person = [p.firstName, p.lastName].filter(Boolean).join(' ');
  return String(p.type === 'COMPANY' ? (p.companyName ?? person) : person || p.companyName || '—');
}

function toParty(p: unknown): PartySection {
  const x = (p ?? {}) as Record<string, unknown>;
  const address = x.address ?? (x.addressStreet || x.addressCity ? x : null);
  return {
    name: partyName(x),
    kind: String(x.type ?? '—'),
    title: (x.title as string) ?? null,
    primary: x.isPrimary === true,
    address: formatAddress(address),
  };
}

/** Flattens an object into label/value rows ('responsibleParty.firstName'), masking secrets. */
function kvRows(value: unknown, prefix = ''): KvRow[] {
  if (value === null || value === undefined) return prefix ? [{ label: prefix, value: '—' }] : [];
  if (Array.isArray(value)) {
    if (value.every((v) => v === null || typeof v !== 'object'))
      return [{ label: prefix, value: value.join(', ') || '—' }];
    return value.flatMap((v, i) => kvRows(v, `${prefix}[${i + 1}]`));
  }
  if (typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => {
      const label = prefix ? `${prefix}.${k}` : k;
      if ((typeof v === 'string' || typeof v === 'number') && (SECRET_KEY.test(k) || SSN_SHAPE.test(String(v))))
        return [{ label, value: maskSecret(v) }];
      return kvRows(v, label);
    });
  }
  return [{ label: prefix, value: String(value) }];
}

const COMPANY_FIELDS = [
  'legalName',
  'tradeName',
  'entityType',
  'structureType',
  'taxElection',
  'fiscalEndMonth',
  'formationState',
  'formationDate',
  'ein',
];
const KNOWN_PRODUCT_KEYS = new Set(['company', 'alternativeNames', 'registeredAgent']);

/**
 * Builds the sections for an order's product object (`orders.details`). Anything not covered by a
 * structured section (EIN answers, expedited, isChangeOfAgent…) lands in `answers`.
 */
export function buildRequestView(details: Record<string, unknown>): RequestView {
  const company = (details.company ?? null) as Record<string, unknown> | null;
  const view: RequestView = {
    company: [],
    addresses: [],
    officers: [],
    agent:
      details.registeredAgent && typeof details.registeredAgent === 'object' ? toParty(details.registeredAgent) : null,
    agentMissing:
      details.registeredAgent && typeof details.registeredAgent === 'object'
        ? missingAgentDetails(details.registeredAgent as Record<string, unknown>)
        : [],
    alternativeNames: Array.isArray(details.alternativeNames) ? details.alternativeNames.map(String) : [],
    answers: [],
    masked: maskDeep(details),
  };
  if (company) {
    view.company = COMPANY_FIELDS.filter((k) => company[k] != null).map((k) => ({
      label: k,
      value: String(company[k]),
    }));
    for (const [key, label] of [
      ['principalAddress', 'Principal address'],
      ['mailingAddress', 'Mailing address'],
    ] as const) {
      if (company[key]) view.addresses.push({ label, lines: formatAddress(company[key]) });
    }
    view.officers = Array.isArray(company.officers) ? company.officers.map(toParty) : [];
  }
  const rest = Object.fromEntries(Object.entries(details).filter(([k]) => !KNOWN_PRODUCT_KEYS.has(k)));
  view.answers = kvRows(rest);
  return view;
}

/** The company record as stored (for orders against an existing company), with officers. */
export function buildCompanyView(company: Record<string, unknown>): {
  rows: KvRow[];
  addresses: Array<{ label: string; lines: string }>;
  officers: PartySection[];
} {
  const snake: Record<string, string> = {
    legal_name: 'legalName',
    trade_name: 'tradeName',
    entity_type: 'entityType',
    structure_type: 'structureType',
    tax_election: 'taxElection',
    fiscal_end_month: 'fiscalEndMonth',
    formation_state: 'formationState',
    formation_date: 'formationDate',
    ein: 'ein',
    slug: 'slug',
  };
  return {
    rows: Object.entries(snake)
      .filter(([k]) => company[k] != null)
      .map(([k, label]) => ({ label, value: String(company[k]) })),
    addresses: [
      { label: 'Principal address', lines: formatAddress(company.principal_address) },
      { label: 'Mailing address', lines: formatAddress(company.mailing_address) },
    ],
    officers: Array.isArray(company.officers) ? company.officers.map(toParty) : [],
  };
}
