import type { Static } from '@sinclair/typebox';
import validator from 'validator';
import type { AppContext, Environment } from '../../context.js';
import { AppError, FieldErrors, notFound, ValidationError } from '../../lib/errors.js';
import { MAX_OPERATOR_CREDIT_DOLLARS, requestDollarsToCents } from '../../lib/amounts.js';
import type { FieldRule } from '../../lib/validation.js';
import { domainTakenError, newDomainToken } from './domain-verification.js';
import * as repo from './organizations.repo.js';
import { forgetWhiteLabelDomainsInProcess } from './white-label-domains.js';
import type { UpdateOrganizationBody } from './organizations.schemas.js';
import { normalizeContactEmail } from './organizations.service.js';
import { type Db, isUniqueViolation, withTransaction } from '../../lib/db.js';
import { settingsSnapshots } from '../audit/audit-redaction.js';
import { type AuditActor, recordAuditChange } from '../audit/audit.service.js';

/** The PATCH /organization body as validated by UpdateOrganizationBody. */
export type OrganizationPatch = Static<typeof UpdateOrganizationBody>;

/**
 * Who asks for a settings change: an integrator's key of one environment, or an operator (console, CLI).
 * `vouchDomain`: an operator may put a white-label domain in effect without the DNS check.
 */
export type SettingsActor = { environment: Environment } | { operator: true; vouchDomain?: boolean };

/**
 * Settings are one set per organization, shared by both environments, and every one of them reaches live
 * customers (the dashboard's host, branding and billing, the emails sent and to whom). So they change only
 * with a live key: a leaked test key must never move live customers' sign-in links or billing.
 * @throws AppError forbidden (403) for a test key sending any field, naming the fields and the live base address.
 */
export function assertMayChangeSettings(ctx: AppContext, actor: SettingsActor, patch: OrganizationPatch): void {
  if (!('environment' in actor) || actor.environment === 'live') return;
  const sent = Object.keys(patch).filter((k) => (patch as Record<string, unknown>)[k] !== undefined);
  if (!sent.length) return;
  throw new AppError(
    'forbidden',
    `Organization settings are shared by the live and test environments and reach live customers, so they change only with a live key: send this request to ${ctx.config.liveBaseUrl}/organization`,
    {
      errors: sent.map((field) => ({ field, message: 'changes only with a live key' })),
    },
  );
}

/**
 * PATCH /organization: validates and applies name, whiteLabelDomain, branding, emailNotifications,
 * dashboardBilling, lowBalanceThreshold (dollars, FUND-15) and contactEmail (the technical contact told when a webhook endpoint is disabled). The domain
 * is stored lower-case; a new one waits for its DNS TXT record (domain-verification.ts) unless an operator vouches
 * for it; sending the current domain again keeps its state. contactEmail is trimmed; empty or null removes it.
 * @throws AppError forbidden (403) for a test key (assertMayChangeSettings); ValidationError (400) naming each bad
 *   field (whiteLabelDomain not a public host name or one of the service's own hosts; branding.logoUrl not an https
 *   URL; contactEmail not an email address); conflict (409) when another organization holds the domain verified;
 *   not_found (404) when the organization does not exist.
 * With `audit` (the portal, the console, the CLI), each of branding, domain and billing settings that changed is
 * recorded in the audit log in the update's transaction (AUDIT-1, AUDIT-2, AUDIT-5); the integrator API passes none.
 */
export async function updateOrganizationSettings(
  ctx: AppContext,
  organizationId: string,
  patch: OrganizationPatch,
  actor: SettingsActor,
  audit?: AuditActor,
): Promise<repo.OrganizationRow> {
  assertMayChangeSettings(ctx, actor, patch);
  // ORG-3: a body that sets nothing (a test key's `{}` among them) changes nothing, updatedAt included.
  if (Object.values(patch).every((v) => v === undefined)) {
    const current = await repo.findOrganization(ctx.pool, organizationId);
    if (!current) throw notFound('organization', organizationId);
    return current;
  }
  const ruleErrors = settingsRuleErrors(ctx)(patch);
  if (ruleErrors.length) throw new ValidationError(ruleErrors);
  const domain =
    patch.whiteLabelDomain === undefined || patch.whiteLabelDomain === null
      ? patch.whiteLabelDomain
      : patch.whiteLabelDomain.trim().toLowerCase();
  const contactEmail = patch.contactEmail === undefined ? undefined : normalizeContactEmail(patch.contactEmail);
  const lowBalanceThresholdCents = thresholdCents(patch.lowBalanceThreshold);
  if (domain && (await repo.findVerifiedDomainHolder(ctx.pool, domain, organizationId))) throw domainTakenError(domain);
  const branding = patch.branding
    ? Object.fromEntries(
        Object.entries(patch.branding).map(([k, v]) => [
          k,
          typeof v === 'string' && k !== 'logoUrl' ? v.toLowerCase() : v,
        ]),
      )
    : undefined;
  const domainVerified = domain ? 'operator' in actor && actor.vouchDomain === true : undefined;
  try {
    const row = await withTransaction(ctx.pool, async (tx) => {
      const before = audit ? await repo.lockOrganization(tx, organizationId) : null;
      const after = await repo.updateOrganizationSettings(tx, organizationId, {
        ...patch,
        name: patch.name?.trim(),
        whiteLabelDomain: domain,
        branding,
        contactEmail,
        lowBalanceThresholdCents,
        domainToken: domain ? newDomainToken() : undefined,
        domainVerified,
      });
      if (!after) throw notFound('organization', organizationId);
      if (audit && before) await recordSettingsChanges(tx, audit, before, after);
      return after;
    });
    // A domain sent may have changed what is verified: this process's next request sees it (the others hear it).
    if (domain !== undefined) forgetWhiteLabelDomainsInProcess();
    return row;
  } catch (err) {
    // Another organization verified the same domain between the check above and this update (operator vouching).
    if (isUniqueViolation(err) && domain) throw domainTakenError(domain);
    throw err;
  }
}

/**
 * ORG-3: the rules of a settings patch its schema cannot say, on the body as sent (it may have failed the schema, so
 * each field is read only when it has the right type): a whiteLabelDomain that is no public host name or is one of the
 * service's own (a blank one is a bad host name, not a removal: null removes it), a branding.logoUrl that is not
 * https, a blank name, a contactEmail that is no address once trimmed, a lowBalanceThreshold not in dollars and cents.
 * The route runs it beside the schema so one 400 names every bad field; the service runs it for every other way in.
 */
export function settingsRuleErrors(ctx: AppContext): FieldRule {
  return (input) => {
    if (typeof input !== 'object' || input === null) return [];
    const patch = input as Record<string, unknown>;
    const errors = new FieldErrors();
    if (typeof patch.whiteLabelDomain === 'string')
      checkDomain(ctx, patch.whiteLabelDomain.trim().toLowerCase(), errors);
    const logoUrl = (patch.branding as Record<string, unknown> | null | undefined)?.logoUrl;
    if (
      typeof logoUrl === 'string' &&
      logoUrl &&
      !validator.isURL(logoUrl, { protocols: ['https'], require_protocol: true, require_valid_protocol: true })
    )
      errors.add('branding.logoUrl', 'must be an https URL, e.g. https://example.com/logo.png');
    if (typeof patch.name === 'string' && !patch.name.trim()) errors.add('name', 'must not be blank');
    if (typeof patch.contactEmail === 'string') normalizeContactEmail(patch.contactEmail, errors);
    if (typeof patch.lowBalanceThreshold === 'number') thresholdCents(patch.lowBalanceThreshold, errors);
    return errors.list;
  };
}

/**
 * FUND-15: lowBalanceThreshold (dollars, at most two decimals) as cents; null removes it, undefined keeps it. A bad
 * amount goes to `errors` when given (undefined returned), else is thrown, as normalizeContactEmail does.
 * @throws ValidationError on lowBalanceThreshold without `errors`.
 */
function thresholdCents(dollars: number | null | undefined, errors?: FieldErrors): number | null | undefined {
  if (dollars === undefined || dollars === null) return dollars;
  if (!errors) return requestDollarsToCents('lowBalanceThreshold', dollars, { max: MAX_OPERATOR_CREDIT_DOLLARS });
  try {
    return requestDollarsToCents('lowBalanceThreshold', dollars, { max: MAX_OPERATOR_CREDIT_DOLLARS });
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    for (const e of err.errors) errors.add(e.field, e.message);
    return undefined;
  }
}

function checkDomain(ctx: AppContext, domain: string, errors: FieldErrors): void {
  const own = [
    ctx.config.liveBaseUrl,
    ctx.config.testBaseUrl,
    ctx.config.dashboardBaseUrl,
    ctx.config.consoleBaseUrl,
  ].map((u) => new URL(u).hostname);
  if (
    !validator.isFQDN(domain, {
      require_tld: true,
      allow_underscores: false,
      allow_trailing_dot: false,
      allow_numeric_tld: false,
    }) ||
    domain.length > 253
  ) {
    errors.add('whiteLabelDomain', 'must be a host name such as portal.example.com (no scheme, port or path)');
  } else if (own.includes(domain)) {
    errors.add('whiteLabelDomain', "must not be one of the service's own host names");
  }
}

/** Settings kinds the audit log records, with their action (AUDIT-1). */
const SETTINGS_ACTIONS = [
  ['branding', 'branding.updated'],
  ['domain', 'domain.updated'],
  ['billing_settings', 'billing_settings.updated'],
] as const;

// AUDIT-5: one entry per kind of setting whose allow-listed fields changed; none when the form was saved unchanged.
async function recordSettingsChanges(
  tx: Db,
  actor: AuditActor,
  before: repo.OrganizationRow,
  after: repo.OrganizationRow,
): Promise<void> {
  const [was, now] = [settingsSnapshots(before), settingsSnapshots(after)];
  for (const [kind, action] of SETTINGS_ACTIONS)
    await recordAuditChange(tx, {
      actor,
      organizationId: after.id,
      environment: null,
      action,
      targetId: after.id,
      before: was[kind],
      after: now[kind],
    });
}
