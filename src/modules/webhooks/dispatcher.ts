import os from 'node:os';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { AppContext } from '../../context.js';
import { SpanStatusCode } from '@opentelemetry/api';
import type { OutageReporter } from '../../lib/db-outage.js';
import { inSpan, type SpanStart } from '../../lib/trace-context.js';
import { EVENTS_CHANNEL } from '../events/event-stream-hub.js';
import type { FinishedAttempt } from './attempt-recorder.js';
import { attemptOutcome, sendAttempt } from './attempt-sender.js';
import { DeliveryClaims } from './delivery-claims.js';
import { DispatchQueues } from './dispatch-queues.js';
import { DELIVERIES_DUE_CHANNEL, type ClaimedDelivery } from './dispatch.repo.js';
import { OutcomeBatcher } from './outcome-batcher.js';
import { WakeListener } from './wake-listener.js';
import { WebhookClient, type SendResult } from './webhook-client.js';
import { webhookAttempts, webhookInFlight } from './webhook-metrics.js';

/**
 * The span of one delivery attempt (OPS-31): a trace of its own (the dispatcher's loop is no request) with a link to
 * the stored trace context of the request that wrote the event, and the ids an operator searches by.
 */
function deliverySpan(row: ClaimedDelivery): SpanStart {
  return {
    name: 'webhook delivery',
    links: [row.event_traceparent],
    attributes: {
      'webhook.delivery.id': row.id,
      'webhook.event.id': row.event_id,
      'webhook.event.type': row.event_type,
      'webhook.endpoint.id': row.endpoint_id,
      'webhook.attempt': row.attempt_count + 1,
      'organization.id': row.organization_id,
    },
  };
}

/** How often an idle dispatcher looks for due retries and expired leases without being woken (ms). */
const POLL_INTERVAL_MS = 1000;

/** A running dispatcher. */
export interface WebhookDispatcher {
  /** Names the process in leases (`leased_by`). */
  readonly owner: string;
  /** Looks for due deliveries now (also done on every NOTIFY and every {@link POLL_INTERVAL_MS}). */
  wake(): void;
  /**
   * Stops claiming, lets attempts under way finish and records them, then closes connections. Attempts still under
   * way after `graceMs` are cut; their rows come back to any dispatcher when their lease runs out.
   */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts the webhook dispatcher of this process (WH-15 to WH-19): it claims due rows of `webhook_deliveries`
 * (the outbox) in batches under a lease, sends them with at most WEBHOOK_CONCURRENCY attempts in flight, at most
 * WEBHOOK_ORGANIZATION_CONCURRENCY per organization and WEBHOOK_ENDPOINT_CONCURRENCY per endpoint, round-robin
 * across organizations and within each across its endpoints ({@link DispatchQueues}), through keep-alive pools, and
 * records finished attempts in batches, each batch in one transaction ({@link OutcomeBatcher}). It wakes on the
 * events channel (signalled after every commit that wrote events), on {@link DELIVERIES_DUE_CHANNEL} (resend, test
 * events), when a slot frees up, and every second (retries, expired leases). Any number of processes may run one:
 * SKIP LOCKED and the lease keep each row with one of them. Rows are claimed up to one cap's worth ahead of the free
 * slots (per endpoint, per organization and in all), so a freed slot starts the next attempt at once; memory is
 * bounded by twice WEBHOOK_CONCURRENCY claimed rows (queued, sending, or finished and waiting for their batch to be
 * written). On stop, rows not started are handed back at once.
 * While the database is unreachable, failed claims, recordings and LISTEN reconnects go to `options.outage`
 * (told once as a warning, OPS-2) instead of one error line each; LISTEN is re-opened until it works.
 * @throws when the LISTEN connection cannot be opened at start.
 */
export async function startWebhookDispatcher(
  ctx: AppContext,
  options: { outage?: OutageReporter } = {},
): Promise<WebhookDispatcher> {
  const dispatcher = new Dispatcher(ctx, options.outage);
  await dispatcher.start();
  return dispatcher;
}

/*
 * The dispatcher is four units, one file each, wired together here:
 *  - claim (delivery-claims.ts): due rows under a lease, held until recorded, leases renewed, unstarted rows handed back;
 *  - schedule (dispatch-queues.ts): claimed rows started round-robin within the caps (WH-17);
 *  - send (attempt-sender.ts): one signed POST through the keep-alive pools (webhook-client.ts);
 *  - record (outcome-batcher.ts, attempt-recorder.ts): finished attempts written in batches, each in one transaction.
 * What wakes the claim unit: the LISTEN connection (wake-listener.ts), the poll, a freed slot and a written batch.
 */
class Dispatcher implements WebhookDispatcher {
  readonly owner = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly client: WebhookClient;
  private readonly claims: DeliveryClaims;
  private readonly queues: DispatchQueues;
  // An attempt's slot in `queues` frees as soon as its answer is in, while its outcome waits here for the next
  // batched write (the row stays leased and held by `claims` meanwhile, so no other sender takes it).
  private readonly outcomes: OutcomeBatcher;
  private readonly listener: WakeListener;
  private poller: NodeJS.Timeout | undefined;
  private stopping = false;
  // Set when stop() gave up waiting: attempts cut by closing the pools are not recorded (their lease runs out instead).
  private abandoned = false;

  constructor(
    private readonly ctx: AppContext,
    private readonly outage?: OutageReporter,
  ) {
    const { config, pool, log } = ctx;
    this.client = new WebhookClient(config.webhookEndpointConcurrency);
    this.queues = new DispatchQueues({
      total: config.webhookConcurrency,
      organization: config.webhookOrganizationConcurrency,
      endpoint: config.webhookEndpointConcurrency,
    });
    this.claims = new DeliveryClaims({
      pool,
      config,
      owner: this.owner,
      room: () => this.queues.claimRoom(),
      claimed: (rows) => this.schedule(rows),
      failed: (err, what) =>
        what === 'claim'
          ? this.failed(err, 'webhook dispatcher claim', 'error', 'webhook dispatcher claim failed')
          : this.failed(err, 'renewing webhook leases', 'warn', 'renewing webhook delivery leases failed'),
    });
    this.outcomes = new OutcomeBatcher(
      { config, pool, log, owner: this.owner },
      (batch) => this.recorded(batch),
      // The rows stay leased to this process: after the lease they are claimed again (at least once, WH-15).
      (err, batch) =>
        this.failed(
          err,
          'recording webhook attempts',
          'error',
          'recording webhook attempts failed; the deliveries will be tried again after their lease',
          { deliveries: batch.length },
        ),
    );
    this.listener = new WakeListener(
      pool.options as pg.ClientConfig,
      [EVENTS_CHANNEL, DELIVERIES_DUE_CHANNEL],
      this.wake,
      (err, context) =>
        this.failed(
          err,
          'webhook dispatcher LISTEN',
          'warn',
          context === 'lost'
            ? 'webhook dispatcher LISTEN connection lost; reconnecting'
            : 'webhook dispatcher LISTEN failed',
        ),
    );
  }

  async start(): Promise<void> {
    // Leases of attempts that run long (a slow receiver) are extended well before they run out.
    this.claims.startRenewing();
    this.poller = setInterval(this.wake, POLL_INTERVAL_MS);
    try {
      await this.listener.open();
    } catch (err) {
      this.claims.stopRenewing();
      clearInterval(this.poller);
      await this.client.close();
      throw err;
    }
  }

  readonly wake = (): void => {
    if (!this.stopping) this.claims.wake();
  };

  async stop(graceMs = 5000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.claims.stop();
    clearInterval(this.poller);
    await this.listener.close();
    // Rows claimed but not started go back to the other processes now rather than after their lease.
    await this.claims.handBack(this.queues.drain());
    const deadline = Date.now() + graceMs;
    while ((this.claims.holding || !this.outcomes.idle || this.claims.busy) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    this.claims.stopRenewing();
    this.abandoned = true;
    await this.client.close();
    await this.outcomes.settled();
  }

  /** Schedule: queues claimed rows and starts queued rows while the caps leave slots free (WH-17). */
  private schedule(rows: ClaimedDelivery[] = []): void {
    this.queues.add(rows);
    while (!this.stopping) {
      const row = this.queues.next();
      if (!row) return;
      this.send(row);
    }
  }

  /**
   * Send: one attempt, or none for a deleted or disabled endpoint (recorded as such). Each attempt is a span of its
   * own linked to the request that wrote the event (OPS-31), a no-op when tracing is off.
   */
  private send(row: ClaimedDelivery): void {
    webhookInFlight.inc();
    const attempt =
      row.endpoint_deleted || row.endpoint_disabled
        ? Promise.resolve(null)
        : inSpan(deliverySpan(row), async (span) => {
            const result = await sendAttempt(this.ctx.config, this.ctx, this.client, row);
            if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode);
            span.setAttribute('webhook.attempt.outcome', attemptOutcome(result));
            if (attemptOutcome(result) !== 'success')
              span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? `HTTP ${result.statusCode}` });
            return result;
          });
    void attempt.then(
      (result) => this.record(row, result),
      (err) => {
        this.ctx.log.error({ err, deliveryId: row.id }, 'webhook attempt failed unexpectedly');
        this.record(row, { statusCode: null, responseBody: '', error: 'Internal error before sending', durationMs: 0 });
      },
    );
  }

  /** Record: frees the attempt's slot, queues its outcome for the next batched write, and starts what waits. */
  private record(row: ClaimedDelivery, result: SendResult | null): void {
    this.queues.done(row);
    webhookInFlight.dec();
    if (this.abandoned) return;
    if (result) webhookAttempts.inc({ outcome: attemptOutcome(result) });
    this.outcomes.add({ row, result });
    this.schedule();
    this.wake();
  }

  private recorded(batch: FinishedAttempt[]): void {
    this.claims.release(batch.map((a) => a.row));
    this.wake();
  }

  // While the database is unreachable the outage reporter tells it once (OPS-2); otherwise one log line.
  private failed(
    err: unknown,
    context: string,
    level: 'error' | 'warn',
    message: string,
    fields: Record<string, unknown> = {},
  ): void {
    if (!this.outage?.report(err, context)) this.ctx.log[level]({ err, ...fields }, message);
  }
}
