import type pg from 'pg';
import { Counter, Gauge } from 'prom-client';
import { registry } from '../../lib/metrics.js';
import { webhookBacklog, type WebhookBacklog } from './dispatch.repo.js';

/** Webhook attempts made by this process, by outcome: success, http_error, timeout, refused, network_error (WH-19). */
export const webhookAttempts = new Counter({
  name: 'webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts made by this process, by outcome (success, http_error, timeout, refused, network_error)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** Webhook deliveries this process has claimed and not yet recorded (at most WEBHOOK_CONCURRENCY). */
export const webhookInFlight = new Gauge({
  name: 'webhook_deliveries_in_flight',
  help: 'Webhook deliveries claimed by this process and not yet recorded',
  registers: [registry],
});

let backlogPool: pg.Pool | null = null;

/**
 * Reports the delivery backlog of the whole service on every scrape (WH-19), read through `pool`: due deliveries
 * (in flight included) and the age in seconds of the oldest due one. The last call's pool is used.
 */
export function observeWebhookBacklog(pool: pg.Pool): void {
  backlogPool = pool;
}

// Both backlog gauges come from one query per scrape.
let lastRead: { at: number; value: Promise<WebhookBacklog | null> } | null = null;
function readBacklog(): Promise<WebhookBacklog | null> {
  if (!backlogPool) return Promise.resolve(null);
  if (!lastRead || Date.now() - lastRead.at > 500)
    lastRead = { at: Date.now(), value: webhookBacklog(backlogPool).catch(() => null) };
  return lastRead.value;
}

new Gauge({
  name: 'webhook_backlog_due_deliveries',
  help: 'Webhook deliveries due now across every tenant (in flight included)',
  registers: [registry],
  async collect() {
    const backlog = await readBacklog();
    if (backlog) this.set(backlog.dueDeliveries);
  },
});

new Gauge({
  name: 'webhook_backlog_oldest_due_seconds',
  help: 'Seconds since the oldest due webhook delivery became due (0 when none is)',
  registers: [registry],
  async collect() {
    const backlog = await readBacklog();
    if (backlog) this.set(backlog.oldestDueSeconds);
  },
});
