import type { AppContext } from '../../context.js';
import { withTransaction } from '../../lib/db.js';
import { AppError } from '../../lib/errors.js';
import { revokeSessionsOfHost } from '../dashboard/dashboard.repo.js';
import { queueDomainLapsedEmail } from '../notifications/notifications.service.js';
import { domainRecordHeld } from '../organizations/domain-verification.js';
import { type DomainToRecheck, listDomainsToRecheck, markDomainLapsed } from '../organizations/organizations.repo.js';
import { forgetWhiteLabelDomainsInProcess } from '../organizations/white-label-domains.js';

/** What one re-check found: domains whose record is still there, taken out of use, and not answered by DNS. */
export interface RecheckCounts {
  held: number;
  lapsed: number;
  unanswered: number;
}

/**
 * ORG-6: looks up the TXT record of every white-label domain verified by DNS, one after the other. A domain whose
 * record is gone (no such name, no TXT record, or none holding the challenge) is taken out of use; one DNS does not
 * answer for (timeout, server failure) is left as it is until the next check, since no answer proves nothing.
 */
export async function recheckWhiteLabelDomains(ctx: AppContext): Promise<RecheckCounts> {
  const counts: RecheckCounts = { held: 0, lapsed: 0, unanswered: 0 };
  for (const d of await listDomainsToRecheck(ctx.pool)) {
    let held: boolean;
    try {
      held = await domainRecordHeld(ctx, d);
    } catch (err) {
      if (!(err instanceof AppError) || err.code !== 'service_unavailable') throw err;
      counts.unanswered += 1;
      continue;
    }
    if (held) counts.held += 1;
    else if (await lapseDomain(ctx, d)) counts.lapsed += 1;
  }
  return counts;
}

// In one transaction: the domain goes back to pending (magic links and emails use DASHBOARD_BASE_URL again, the host
// stops answering), the sessions started on it end (their cookies would go to the domain's next owner), and the
// organization's technical contact is emailed. False when the domain changed since it was listed.
async function lapseDomain(ctx: AppContext, d: DomainToRecheck): Promise<boolean> {
  const outcome = await withTransaction(ctx.pool, async (tx) => {
    if (!(await markDomainLapsed(tx, d))) return null;
    const sessionsRevoked = await revokeSessionsOfHost(tx, d.id, d.white_label_domain);
    const contact = await queueDomainLapsedEmail(tx, d.id, d.white_label_domain);
    return { sessionsRevoked, told: contact !== null };
  });
  if (!outcome) return false;
  forgetWhiteLabelDomainsInProcess();
  ctx.log.warn(
    { organizationId: d.id, domain: d.white_label_domain, ...outcome },
    outcome.told
      ? 'white-label domain taken out of use: its TXT record is gone; the technical contact is emailed'
      : 'white-label domain taken out of use: its TXT record is gone; the organization has no technical contact to email',
  );
  return true;
}
