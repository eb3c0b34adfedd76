import { formatCents } from '../../lib/money.js';
import { EXCEPTION_REASONS } from '../orders/exception-codes.js';
import { awaitsResponsibleParty } from '../filings/ein-corrections.js';
import { formatDate, ORDER_TYPE_LABELS } from '../branding/wording.js';
import type { CompanyRow, ListedOrderRow } from './dashboard.repo.js';

/** Status names a customer understands, with a tone for the badge (FIL-1, DASH-2). */
const STATUS: Record<string, { label: string; tone: string }> = {
  submitted: { label: 'Submitted', tone: 'info' },
  pending: { label: 'With the state', tone: 'info' },
  filed: { label: 'Filed', tone: 'success' },
  exception: { label: 'Needs attention', tone: 'warning' },
  cancelled: { label: 'Cancelled', tone: 'muted' },
};

/** An order as the pages show it; the exception reason is the standard description of its code, in words. */
export function presentOrder(o: ListedOrderRow) {
  const status = STATUS[o.filing_status] ?? { label: o.filing_status, tone: 'muted' };
  return {
    id: o.id,
    companyId: o.company_id,
    companyName: o.company_name,
    product: ORDER_TYPE_LABELS[o.order_type] ?? o.order_type,
    changeOfAgent: o.filing_type === 'change_of_agent',
    state: o.filing_state,
    status: status.label,
    tone: status.tone,
    placedOn: formatDate(o.created_at),
    filedOn: formatDate(o.filing_date),
    subscription: o.subscription_status,
    exceptionReason:
      o.filing_status === 'exception'
        ? o.exception_code
          ? (EXCEPTION_REASONS[o.exception_code] ?? 'The filing needs attention')
          : 'The filing needs attention'
        : null,
    exceptionMessage: o.filing_status === 'exception' ? o.exception_message : null,
    // ORD-EIN-8: the IRS refused the responsible party; the customer can send a corrected one.
    correctable: awaitsResponsibleParty(o),
    paid: o.billing === 'checkout' ? formatCents(o.amount_cents) : null,
  };
}

/** 'line1, line2, City, ST 12345, US' */
function formatAddress(a: Record<string, string> | null | undefined): string {
  if (!a) return '';
  const cityLine = [a.city, [a.state, a.postalCode].filter(Boolean).join(' ')].filter(Boolean).join(', ');
  return [a.line1, a.line2, cityLine, a.country].filter(Boolean).join(', ');
}

/** A company with its officers of record, for the company page. */
export function presentCompany(c: CompanyRow) {
  return {
    id: c.id,
    legalName: c.legal_name,
    tradeName: c.trade_name,
    ein: c.ein,
    entityType: c.entity_type === 'CORP' ? 'Corporation' : 'LLC',
    structure:
      c.entity_type === 'LLC'
        ? c.structure_type === 'MANAGER'
          ? 'Manager-managed'
          : c.structure_type === 'MEMBER'
            ? 'Member-managed'
            : null
        : c.tax_election,
    formationState: c.formation_state,
    formationDate: formatDate(c.formation_date),
    fiscalEndMonth: c.fiscal_end_month,
    principalAddress: formatAddress(c.principal_address),
    mailingAddress: formatAddress(c.mailing_address),
    officers: (Array.isArray(c.officers) ? c.officers : []).map(presentOfficer),
  };
}

function presentOfficer(o: Record<string, unknown>) {
  const name = o.type === 'COMPANY' ? String(o.companyName ?? '') : [o.firstName, o.lastName].filter(Boolean).join(' ');
  return {
    name,
    title: String(o.title ?? ''),
    isPrimary: o.isPrimary === true,
    address: formatAddress(o.address as Record<string, string>),
  };
}
