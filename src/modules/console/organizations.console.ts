import type { AppContext, Environment } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { getOrganizationOrThrow, loadOrganizationAdmin } from '../organizations/organizations.service.js';
import { organizationAdminView } from '../organizations/organizations.views.js';
import { updateOrganizationSettings } from '../organizations/organization-settings.js';
import { verifyWhiteLabelDomain } from '../organizations/domain-verification.js';
import * as repo from './console.repo.js';
import { withFields } from '../../lib/objects.js';
import type { AuditActor } from '../audit/audit.service.js';

/** A row of the operator's organization list: balances per environment in cents. */
export interface OrganizationSummary {
  id: string;
  name: string;
  whiteLabelDomain: string | null;
  liveBalanceCents: number;
  testBalanceCents: number;
  activeKeys: number;
  openLiveOrders: number;
  createdAt: Date;
}

/** Every organization with balances, active key count and open live orders, newest first (one query). */
export async function listOrganizationSummaries(db: Db): Promise<OrganizationSummary[]> {
  const rows = await repo.listOrganizationRows(db);
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    whiteLabelDomain: r.white_label_domain,
    liveBalanceCents: r.live,
    testBalanceCents: r.test,
    activeKeys: r.keys,
    openLiveOrders: r.open,
    createdAt: r.created_at,
  }));
}

/** The most recent ledger entries of one tenant, newest first (cents). */
export function recentLedger(db: Db, organizationId: string, environment: Environment, limit = 15) {
  return repo.listRecentLedger(db, organizationId, environment, limit);
}

/**
 * The operator's full view of one organization (console page and `org show`): settings, balances in both
 * units, redacted keys, and how its white-label domain is checked (ORG-6): `whiteLabelDomainVouched` (an operator put
 * it in effect; not re-checked) and `whiteLabelDomainLapsedAt` (ISO 8601: the daily re-check took it out of use; null
 * otherwise). @throws AppError not_found.
 */
export async function organizationDetail(ctx: AppContext, organizationId: string) {
  const data = await loadOrganizationAdmin(ctx.pool, await getOrganizationOrThrow(ctx.pool, organizationId));
  const o = data.organization;
  return withFields(organizationAdminView(data), {
    balanceCents: data.balanceCents,
    whiteLabelDomainVouched: o.white_label_domain_vouched,
    whiteLabelDomainLapsedAt: o.white_label_domain_lapsed_at?.toISOString() ?? null,
  });
}

/** What organizationDetail returns: the admin view of the organization (dollars) plus `balanceCents` per environment. */
export type OrganizationDetail = Awaited<ReturnType<typeof organizationDetail>>;

/**
 * Sets or clears (empty/null) an organization's white-label domain through the organization settings rules
 * (host name check, not one of ours, no other organization holding it). Like the integrator's own change, a new
 * domain waits for its DNS TXT record, unless `options.verified`: the operator vouches that the organization
 * controls it (checked by other means, e.g. a support ticket from the domain's owner) and it takes effect at once.
 * `options.audit`: the operator (console) or the CLI, recorded in the audit log with the change (AUDIT-1).
 * @throws ValidationError, AppError conflict / not_found.
 */
export async function setWhiteLabelDomain(
  ctx: AppContext,
  organizationId: string,
  domain: string | null,
  options: { verified?: boolean; audit: AuditActor },
): Promise<OrganizationDetail> {
  await getOrganizationOrThrow(ctx.pool, organizationId);
  await updateOrganizationSettings(
    ctx,
    organizationId,
    { whiteLabelDomain: domain?.trim() ? domain.trim() : null },
    { operator: true, vouchDomain: options.verified === true },
    options.audit,
  );
  return organizationDetail(ctx, organizationId);
}

/**
 * Runs the DNS check of the organization's requested domain for an operator (same rules as the integrator's
 * verify operation), recorded in the audit log as done by `audit` (AUDIT-1). @throws AppError domain_not_verified / conflict / not_found / service_unavailable.
 */
export async function verifyDomainForOperator(
  ctx: AppContext,
  organizationId: string,
  audit: AuditActor,
): Promise<OrganizationDetail> {
  await verifyWhiteLabelDomain(ctx, organizationId, audit);
  return organizationDetail(ctx, organizationId);
}
