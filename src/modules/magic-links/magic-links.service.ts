import type { AppContext, Tenant } from '../../context.js';
import { AppError, referencedNotFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { randomToken, sha256 } from '../../lib/secrets.js';
import { effectiveDomain } from '../organizations/domain-verification.js';
import { getOrganizationOrThrow } from '../organizations/organizations.service.js';
import * as repo from './magic-links.repo.js';

/** Lifetime of a magic link, in seconds (ML-3, LIM-4: 7 days; single use). */
const MAGIC_LINK_TTL_SECONDS = 7 * 24 * 3600;

/** Random bytes in a token (ML-2: 32). */
const TOKEN_BYTES = 32;

/** What POST /auth/magic-link answers: the URL (a live credential) and when it stops working (ISO 8601). */
export interface MintedMagicLink {
  magicLink: string;
  expiresAt: string;
}

/**
 * Mints a fresh single-use dashboard link for a user of the tenant (ML-1 to ML-5).
 * The token is 32 random bytes (base64url); only its sha256 is stored, with the host the link names. The URL is
 * `https://<white-label domain>/auth/<token>` when the organization has a verified one, else
 * `<DASHBOARD_BASE_URL>/auth/<token>`; the `/auth/<token>` shape is one the logger scrubs.
 * @throws AppError not_found (404) for a userId or companyId not in the tenant;
 *         forbidden (403) when the user is not an admin of companyId (AUTH-5).
 */
export async function mintMagicLink(
  ctx: AppContext,
  tenant: Tenant,
  input: { userId: string; companyId?: string },
): Promise<MintedMagicLink> {
  const { userId, companyId = null } = input;
  // TEN-3: an id of the body that names nothing of the tenant is a 404 naming its field, as POST /companies answers.
  if (!(await repo.userExists(ctx.pool, tenant, userId)))
    throw referencedNotFound([{ field: 'userId', message: `no user '${userId}' exists in this environment` }]);
  if (companyId) await throwIfNotCompanyAdmin(ctx, tenant, companyId, userId);
  const token = randomToken(TOKEN_BYTES);
  const organization = await getOrganizationOrThrow(ctx.pool, tenant.organizationId);
  const origin = dashboardOrigin(ctx, effectiveDomain(organization));
  // The link opens only on the host it names (a link that leaked to another host, or was minted for a domain the
  // organization gave up, signs no one in there).
  const row = await repo.insertMagicLink(ctx.pool, tenant, {
    id: newId('magicLink'),
    userId,
    companyId,
    tokenHash: sha256(token),
    ttlSeconds: MAGIC_LINK_TTL_SECONDS,
    host: new URL(origin).hostname,
  });
  return { magicLink: `${origin}/auth/${token}`, expiresAt: row!.expires_at.toISOString() };
}

/** Lower-case host name of the default dashboard address: where links minted without a white-label domain open. */
export function defaultDashboardHost(ctx: AppContext): string {
  return new URL(ctx.config.dashboardBaseUrl).hostname;
}

/**
 * Where an organization's dashboard lives: `https://<white-label domain>` (dashboard at the root) when set,
 * else DASHBOARD_BASE_URL (ML-2, ORG-4). No trailing slash.
 */
function dashboardOrigin(ctx: AppContext, whiteLabelDomain: string | null): string {
  return whiteLabelDomain ? `https://${whiteLabelDomain}` : ctx.config.dashboardBaseUrl;
}

async function throwIfNotCompanyAdmin(
  ctx: AppContext,
  tenant: Tenant,
  companyId: string,
  userId: string,
): Promise<void> {
  const company = await repo.findCompanyAdminship(ctx.pool, tenant, companyId, userId);
  if (!company)
    throw referencedNotFound([{ field: 'companyId', message: `no company '${companyId}' exists in this environment` }]);
  if (!company.is_admin) {
    throw new AppError(
      'forbidden',
      `User '${userId}' is not an admin of company '${companyId}'; a magic link with companyId needs an admin of that company`,
      {
        errors: [{ field: 'companyId', message: `user '${userId}' is not an admin of this company` }],
      },
    );
  }
}
