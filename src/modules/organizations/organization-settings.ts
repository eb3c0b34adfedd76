import type { Static } from '@sinclair/typebox';
import validator from 'validator';
import type { AppContext } from '../../context.js';
import { isUniqueViolation } from '../../lib/db.js';
import { AppError, FieldErrors, notFound } from '../../lib/errors.js';
import * as repo from './organizations.repo.js';
import type { UpdateOrganizationBody } from './organizations.schemas.js';
import { normalizeContactEmail } from './organizations.service.js';

/** The PATCH /organization body as validated by UpdateOrganizationBody. */
export type OrganizationPatch = Static<typeof UpdateOrganizationBody>;

/**
 * PATCH /organization (issue 5 item 6): validates and applies name, whiteLabelDomain, branding, emailNotifications,
 * dashboardBilling and contactEmail (the technical contact told when a webhook endpoint is disabled; ARCHITECTURE.md
 * "Webhooks"). The domain is stored lower-case; contactEmail trimmed, empty or null removes it.
 * @throws ValidationError (400) naming each bad field (whiteLabelDomain not a public host name or one of the
 *   service's own hosts; branding.logoUrl not an https URL; contactEmail not an email address); AppError conflict
 *   (409) when another organization uses the domain; not_found (404) when the organization does not exist.
 */
export async function updateOrganizationSettings(ctx: AppContext, organizationId: string, patch: OrganizationPatch): Promise<repo.OrganizationRow> {
  const errors = new FieldErrors();
  const domain = patch.whiteLabelDomain === undefined || patch.whiteLabelDomain === null ? patch.whiteLabelDomain : patch.whiteLabelDomain.trim().toLowerCase();
  if (domain) checkDomain(ctx, domain, errors);
  const logoUrl = patch.branding?.logoUrl;
  if (logoUrl && !validator.isURL(logoUrl, { protocols: ['https'], require_protocol: true, require_valid_protocol: true })) {
    errors.add('branding.logoUrl', 'must be an https URL, e.g. https://example.com/logo.png');
  }
  if (patch.name !== undefined && !patch.name.trim()) errors.add('name', 'must not be blank');
  const contactEmail = patch.contactEmail === undefined ? undefined : normalizeContactEmail(patch.contactEmail, errors);
  errors.throwIfAny();
  const branding = patch.branding
    ? Object.fromEntries(Object.entries(patch.branding).map(([k, v]) => [k, typeof v === 'string' && k !== 'logoUrl' ? v.toLowerCase() : v]))
    : undefined;
  try {
    const row = await repo.updateOrganizationSettings(ctx.pool, organizationId, { ...patch, name: patch.name?.trim(), whiteLabelDomain: domain, branding, contactEmail });
    if (!row) throw notFound('organization', organizationId);
    return row;
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw new AppError('conflict', `whiteLabelDomain '${domain}' is already used by another organization`, { errors: [{ field: 'whiteLabelDomain', message: 'is already used by another organization' }] });
    }
    throw err;
  }
}

function checkDomain(ctx: AppContext, domain: string, errors: FieldErrors): void {
  const own = [ctx.config.liveBaseUrl, ctx.config.testBaseUrl, ctx.config.dashboardBaseUrl, ctx.config.consoleBaseUrl].map((u) => new URL(u).hostname);
  if (!validator.isFQDN(domain, { require_tld: true, allow_underscores: false, allow_trailing_dot: false, allow_numeric_tld: false }) || domain.length > 253) {
    errors.add('whiteLabelDomain', 'must be a host name such as portal.example.com (no scheme, port or path)');
  } else if (own.includes(domain)) {
    errors.add('whiteLabelDomain', "must not be one of the service's own host names");
  }
}
