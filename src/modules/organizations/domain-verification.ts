import { promises as dns } from 'node:dns';
import type { AppContext } from '../../context.js';
import { isUniqueViolation, withTransaction } from '../../lib/db.js';
import { settingsSnapshots } from '../audit/audit-redaction.js';
import { type AuditActor, recordAudit } from '../audit/audit.service.js';
import { AppError, notFound } from '../../lib/errors.js';
import { randomToken } from '../../lib/secrets.js';
import * as repo from './organizations.repo.js';
import { forgetWhiteLabelDomainsInProcess } from './white-label-domains.js';

/**
 * Label under the domain whose TXT record proves control: `_fcs-domain-verification.portal.example.com`.
 * A label of its own (like ACME's `_acme-challenge`) leaves the domain's other records alone, and the
 * domain itself usually needs a CNAME, which may not sit beside a TXT record at the same name.
 */
const TXT_RECORD_LABEL = '_fcs-domain-verification';
/** Prefix of the TXT value, so the record says what it is for: `fcs-domain-verification=<token>`. */
const TXT_VALUE_PREFIX = 'fcs-domain-verification=';

/** What an organization must publish, and whether it has: part of the Organization the API returns. */
export interface DomainVerificationView {
  status: 'pending' | 'verified';
  recordType: 'TXT';
  recordName: string;
  recordValue: string;
  /** ISO 8601; null while pending. */
  verifiedAt: string | null;
}

/** A fresh challenge token for a newly requested domain: 24 random bytes, so no one can guess another's. */
export function newDomainToken(): string {
  return randomToken(24);
}

/** The record an organization must publish for its requested domain, or null when it has none. */
export function domainVerificationView(o: repo.OrganizationRow): DomainVerificationView | null {
  if (!o.white_label_domain || !o.white_label_domain_token) return null;
  return {
    status: o.white_label_domain_verified_at ? 'verified' : 'pending',
    recordType: 'TXT',
    ...domainRecord(o.white_label_domain, o.white_label_domain_token),
    verifiedAt: o.white_label_domain_verified_at?.toISOString() ?? null,
  };
}

/** The TXT record proving control of `domain` with the challenge `token`: its name and value. */
export function domainRecord(domain: string, token: string): { recordName: string; recordValue: string } {
  return { recordName: `${TXT_RECORD_LABEL}.${domain}`, recordValue: `${TXT_VALUE_PREFIX}${token}` };
}

/** The white-label domain in effect (verified), or null: magic links and Host routing use only this. */
export function effectiveDomain(o: repo.OrganizationRow): string | null {
  return o.white_label_domain && o.white_label_domain_verified_at ? o.white_label_domain : null;
}

/**
 * Checks the DNS TXT record of the organization's requested domain and, when it holds the challenge, puts
 * the domain in effect. Already verified: returns the organization unchanged.
 * @throws AppError conflict (409) when no domain is requested or another organization holds it verified;
 *   domain_not_verified (409) when the record is missing or holds another value (the message names the record);
 *   service_unavailable (503) when DNS could not be asked (timeout, server failure); not_found (404).
 * With `audit` (the portal, the console, the CLI) the verification is recorded in the audit log in the transaction that
 * puts the domain in effect (AUDIT-1, AUDIT-2); the integrator API passes none.
 */
export async function verifyWhiteLabelDomain(
  ctx: AppContext,
  organizationId: string,
  audit?: AuditActor,
): Promise<repo.OrganizationRow> {
  // Read through the repository, not organizations.service (which imports this module for domainVerificationView).
  const o = await repo.findOrganization(ctx.pool, organizationId);
  if (!o) throw notFound('organization', organizationId);
  const challenge = domainVerificationView(o);
  if (!challenge) {
    throw new AppError(
      'conflict',
      'No white-label domain is requested: set whiteLabelDomain with PATCH /organization first',
      {
        errors: [{ field: 'whiteLabelDomain', message: 'is not set' }],
      },
    );
  }
  if (challenge.status === 'verified') return o;
  const values = await txtValues(ctx, challenge.recordName);
  if (!values.includes(challenge.recordValue)) {
    const found = values.length
      ? `found ${values.length} TXT record(s) there, none holding it`
      : 'found no TXT record there';
    throw new AppError(
      'domain_not_verified',
      `Add a TXT record named ${challenge.recordName} with the value ${challenge.recordValue}, then verify again (${found}; DNS changes can take a while to appear)`,
      {
        errors: [
          {
            field: 'whiteLabelDomain',
            message: `needs the TXT record ${challenge.recordName} = ${challenge.recordValue}`,
          },
        ],
      },
    );
  }
  const verified = await markVerified(ctx, o, audit);
  if (!verified)
    throw new AppError('conflict', 'The white-label domain changed while it was being verified; verify the new one');
  forgetWhiteLabelDomainsInProcess();
  ctx.log.info({ organizationId, domain: o.white_label_domain }, 'white-label domain verified');
  return verified;
}

async function markVerified(
  ctx: AppContext,
  o: repo.OrganizationRow,
  audit: AuditActor | undefined,
): Promise<repo.OrganizationRow | null> {
  try {
    return await withTransaction(ctx.pool, async (tx) => {
      const row = await repo.markDomainVerified(tx, o.id, o.white_label_domain!, o.white_label_domain_token!);
      if (row && audit)
        await recordAudit(tx, {
          actor: audit,
          organizationId: o.id,
          environment: null,
          action: 'domain.verified',
          targetId: o.id,
          before: settingsSnapshots(o).domain,
          after: settingsSnapshots(row).domain,
        });
      return row;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw domainTakenError(o.white_label_domain!);
    throw err;
  }
}

/**
 * Whether the domain's TXT record still holds its challenge (ORG-6: a verified domain must keep it published).
 * @param d the organization's domain and token, as listDomainsToRecheck gives them.
 * @throws AppError service_unavailable (503) when DNS could not be asked (timeout, server failure): no answer either way.
 */
export async function domainRecordHeld(ctx: AppContext, d: repo.DomainToRecheck): Promise<boolean> {
  const { recordName, recordValue } = domainRecord(d.white_label_domain, d.white_label_domain_token);
  return (await txtValues(ctx, recordName)).includes(recordValue);
}

/** The 409 for a domain another organization holds verified, naming the field. */
export function domainTakenError(domain: string): AppError {
  return new AppError('conflict', `whiteLabelDomain '${domain}' is already used by another organization`, {
    errors: [{ field: 'whiteLabelDomain', message: 'is already used by another organization' }],
  });
}

/**
 * Longest wait for the TXT records of a name, in ms (OPS-7): an unreachable or silent DNS server makes the
 * verification answer 503 within this, far inside the 15 s within which every request is answered.
 */
export const TXT_LOOKUP_TIMEOUT_MS = 4000;

// The system resolver's servers, asked for at most two tries of a second and a half each (c-ares's defaults, four
// tries of five seconds growing each round, take over a minute against a silent server); the deadline above bounds
// the rest (several servers, a resolver of the tests).
const RESOLVER_OPTIONS = { timeout: 1500, tries: 2 };

// Every TXT record at `name`, each joined from its character-strings (a long value is split into 255-byte
// strings); a name without records is an empty list, and any other DNS failure (a timeout included) is the caller's
// 503.
async function txtValues(ctx: AppContext, name: string): Promise<string[]> {
  const resolver = ctx.resolveTxt ? null : new dns.Resolver(RESOLVER_OPTIONS);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error(`queryTxt ETIMEOUT ${name}`), { code: 'ETIMEOUT' })),
      TXT_LOOKUP_TIMEOUT_MS,
    );
  });
  try {
    const records = await Promise.race([resolver ? resolver.resolveTxt(name) : ctx.resolveTxt!(name), deadline]);
    return records.map((chunks) => chunks.join('').trim());
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA' || code === 'NXDOMAIN') return [];
    ctx.log.warn({ name, code }, 'white-label domain verification: DNS lookup failed');
    throw new AppError(
      'service_unavailable',
      `The DNS lookup of ${name} failed (${code ?? 'error'}); try again in a moment`,
    );
  } finally {
    clearTimeout(timer);
    // A query still under way past the deadline is dropped with its resolver.
    resolver?.cancel();
  }
}
