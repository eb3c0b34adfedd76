import { defineTask } from '../../lib/jobs.js';
import { runRecovery } from './recoveries.service.js';

declare global {
  namespace GraphileWorker {
    interface Tasks {
      /** Re-queues an endpoint's failed deliveries since a moment; queued by requestRecovery (PORTAL-22). */
      recover_webhook_deliveries: { recoveryId: string };
    }
  }
}

/**
 * Runs one recovery of failed webhook deliveries (PORTAL-22), in batches whose progress the portal shows. A failure
 * throws, so graphile-worker retries; the retry goes on after the last batch committed.
 */
export const recoverWebhookDeliveriesTask = defineTask('recover_webhook_deliveries', (ctx) => {
  return async ({ recoveryId }) => {
    await runRecovery(ctx, recoveryId);
  };
});
