import type { CronItem } from 'graphile-worker';
import { defineTask, type CronPayload } from '../../lib/jobs.js';
import { recheckWhiteLabelDomains } from './domain-recheck.js';

declare global {
  namespace GraphileWorker {
    interface Tasks {
      /** Re-checks the DNS record of every verified white-label domain; queued by cron only, so the payload is cron's. */
      recheck_white_label_domains: CronPayload;
    }
  }
}

/** ORG-6: takes out of use every verified white-label domain whose TXT record is gone (domain-recheck.ts). */
export const recheckWhiteLabelDomainsTask = defineTask('recheck_white_label_domains', (ctx) => {
  return async () => {
    const counts = await recheckWhiteLabelDomains(ctx);
    ctx.log.info({ counts }, 'white-label domains re-checked');
  };
});

/**
 * Daily at 04:23 UTC, once across all workers (graphile-worker cron). A missed day is caught up by the next check:
 * each one looks at every domain as it is then.
 */
export const recheckWhiteLabelDomainsCron: CronItem = {
  task: recheckWhiteLabelDomainsTask.name,
  match: '23 4 * * *',
  identifier: 'maintenance:recheck-white-label-domains-daily',
  options: { backfillPeriod: 0, maxAttempts: 3, queueName: 'maintenance' },
};
