import os from 'node:os';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { AppContext } from '../../context.js';
import { listenOn, withTransaction } from '../../lib/db.js';
import type { OutageReporter } from '../../lib/db-outage.js';
import { EVENTS_CHANNEL } from '../events/event-stream-hub.js';
import { TEST_EVENT_TYPE, type EventEnvelope } from '../events/events.service.js';
import { queueEndpointDisabledEmail } from '../notifications/notifications.service.js';
import { decideDelivery, isSuccess } from './delivery-policy.js';
import {
  claimDueDeliveries,
  DELIVERIES_DUE_CHANNEL,
  recordOutcomes,
  releaseLeases,
  renewLeases,
  type ClaimedDelivery,
  type DeliveryOutcome,
} from './dispatch.repo.js';
import { signatureHeader, SIGNATURE_HEADER } from './signature.js';
import { UnsafeWebhookUrlError, vetWebhookUrl } from './url-guard.js';
import { signingSecrets } from './endpoint-secrets.js';
import { WebhookClient, type SendResult } from './webhook-client.js';
import { clearEndpointFailing, disableEndpoint, markEndpointFailing } from './webhooks.repo.js';
import { webhookAttempts, webhookInFlight } from './webhook-metrics.js';

const USER_AGENT = 'FilingComplianceService-Webhooks/1.6.0';

/** How often an idle dispatcher looks for due retries and expired leases without being woken (ms). */
export const POLL_INTERVAL_MS = 1000;
/** Outcomes written per statement at most; more wait for the next write. */
export const RECORD_BATCH_MAX = 500;
/** How long to wait before opening the LISTEN connection again after it broke (ms). */
const RELISTEN_DELAY_MS = 1000;

/** Opened signing secrets by endpoint and stored values, so a burst of deliveries opens each secret once. */
const openedSecrets = new Map<string, string[]>();
/** Endpoints whose opened secrets are kept at most (the map is emptied beyond it). */
const OPENED_SECRETS_MAX = 10_000;

/**
 * The signing secrets of a claimed endpoint, current first (WH-2, WH-3): the one place an attempt reads them. The
 * opened values are kept by (endpoint, stored values): a rotation stores new values, so it is seen at once.
 */
export function endpointSigningSecrets(
  ctx: Pick<AppContext, 'secrets'>,
  row: Pick<ClaimedDelivery, 'endpoint_id' | 'secret' | 'previous_secret'>,
): string[] {
  const key = `${row.endpoint_id}\n${row.secret}\n${row.previous_secret ?? ''}`;
  const known = openedSecrets.get(key);
  if (known) return known;
  // The claim already dropped a previous secret whose grace ended (by the database clock).
  const farFuture = new Date(8.64e15);
  const opened = signingSecrets(
    ctx,
    {
      endpointId: row.endpoint_id,
      secret: row.secret,
      previousSecret: row.previous_secret,
      previousSecretExpiresAt: row.previous_secret ? farFuture : null,
    },
    new Date(),
  );
  if (openedSecrets.size >= OPENED_SECRETS_MAX) openedSecrets.clear();
  openedSecrets.set(key, opened);
  return opened;
}

/** The body exactly as delivered: the stored event as its envelope (EVT-1). */
export function envelopeOf(
  row: Pick<ClaimedDelivery, 'event_id' | 'event_type' | 'event_created_at' | 'event_data'>,
): EventEnvelope {
  return {
    id: row.event_id,
    type: row.event_type,
    createdAt: row.event_created_at.toISOString(),
    data: row.event_data,
  };
}

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

interface InFlight {
  row: ClaimedDelivery;
  claimedAt: number;
}

/**
 * Starts the webhook dispatcher of this process (WH-15 to WH-19): it claims due rows of `webhook_deliveries`
 * (the outbox) in batches under a lease, sends them with at most WEBHOOK_CONCURRENCY attempts in flight and at most
 * WEBHOOK_ENDPOINT_CONCURRENCY per endpoint, through keep-alive pools, and records finished attempts in batches,
 * each batch in one transaction. It wakes on the events channel (signalled after every commit that wrote events),
 * on {@link DELIVERIES_DUE_CHANNEL} (resend, test events), when a slot frees up, and every second (retries,
 * expired leases). Any number of processes may run one: SKIP LOCKED and the lease keep each row with one of them.
 * Rows are claimed up to one cap's worth ahead of the free slots (per endpoint and in all), so a freed slot starts the
 * next attempt at once; memory is bounded by twice WEBHOOK_CONCURRENCY claimed rows (queued, sending, or finished and
 * waiting for their batch to be written). On stop, rows not started are handed back at once.
 * While the database is unreachable, failed claims, recordings and LISTEN reconnects go to `options.outage`
 * (told once as a warning, OPS-2) instead of one error line each; LISTEN is re-opened until it works.
 * @throws when the LISTEN connection cannot be opened at start.
 */
export async function startWebhookDispatcher(
  ctx: AppContext,
  options: { outage?: OutageReporter } = {},
): Promise<WebhookDispatcher> {
  const { config, pool, log } = ctx;
  const outage = (err: unknown, context: string) => options.outage?.report(err, context) ?? false;
  const owner = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const client = new WebhookClient(config.webhookEndpointConcurrency);
  // Claimed rows until their outcome is recorded (their leases are renewed; memory is bounded by twice the cap).
  const inFlight = new Map<string, InFlight>();
  // HTTP attempts under way, in all and per endpoint: a slot frees as soon as its answer is in, while the outcome
  // waits for the next batched write (the row stays leased meanwhile, so no other sender takes it).
  let sending = 0;
  const perEndpoint = new Map<string, number>();
  // Rows claimed ahead of a free slot, per endpoint (at most one more cap's worth each): a freed slot starts the next
  // one at once instead of waiting for a claim's round trip. Endpoints are served round-robin from here (WH-17).
  const queued = new Map<string, ClaimedDelivery[]>();
  let finished: Array<{ row: ClaimedDelivery; result: SendResult | null }> = [];
  let stopping = false;
  // Set when stop() gave up waiting: attempts cut by closing the pools are not recorded (their lease runs out instead).
  let abandoned = false;
  let claiming = false;
  let claimAgain = false;
  let recording: Promise<void> | null = null;
  let listener: pg.Client | null = null;
  let relisten: NodeJS.Timeout | null = null;

  const cap = config.webhookEndpointConcurrency;
  const free = () => 2 * config.webhookConcurrency - inFlight.size;
  const claimedFor = (endpointId: string) => (perEndpoint.get(endpointId) ?? 0) + (queued.get(endpointId)?.length ?? 0);

  function wake(): void {
    if (stopping) return;
    if (claiming) {
      claimAgain = true;
      return;
    }
    claiming = true;
    void claimLoop()
      .catch((err) => {
        if (!outage(err, 'webhook dispatcher claim')) log.error({ err }, 'webhook dispatcher claim failed');
      })
      .finally(() => {
        claiming = false;
        if (claimAgain) {
          claimAgain = false;
          if (free() > 0) wake();
        }
      });
  }

  async function claimLoop(): Promise<void> {
    while (!stopping && free() > 0) {
      const limit = free();
      const roomByEndpoint: Record<string, number> = {};
      for (const endpointId of new Set([...perEndpoint.keys(), ...queued.keys()]))
        roomByEndpoint[endpointId] = Math.max(0, 2 * cap - claimedFor(endpointId));
      const rows = await claimDueDeliveries(pool, {
        owner,
        limit,
        endpointCap: 2 * cap,
        roomByEndpoint,
        leaseMs: config.webhookLeaseMs,
      });
      const claimedAt = Date.now();
      for (const row of rows) {
        inFlight.set(row.id, { row, claimedAt });
        const list = queued.get(row.endpoint_id) ?? [];
        list.push(row);
        queued.set(row.endpoint_id, list);
      }
      pump();
      if (rows.length < limit) return;
    }
  }

  /** Starts queued rows while there are free slots, one endpoint after another (each endpoint within its cap). */
  function pump(): void {
    let started = true;
    while (started && !stopping && sending < config.webhookConcurrency && queued.size) {
      started = false;
      for (const [endpointId, list] of queued) {
        if (sending >= config.webhookConcurrency) break;
        if ((perEndpoint.get(endpointId) ?? 0) >= cap) continue;
        start(list.shift()!);
        if (!list.length) queued.delete(endpointId);
        started = true;
      }
    }
  }

  function start(row: ClaimedDelivery): void {
    sending += 1;
    perEndpoint.set(row.endpoint_id, (perEndpoint.get(row.endpoint_id) ?? 0) + 1);
    webhookInFlight.inc();
    const attempt = row.endpoint_deleted || row.endpoint_disabled ? Promise.resolve(null) : send(row);
    void attempt.then(
      (result) => finish(row, result),
      (err) => {
        log.error({ err, deliveryId: row.id }, 'webhook attempt failed unexpectedly');
        finish(row, { statusCode: null, responseBody: '', error: 'Internal error before sending', durationMs: 0 });
      },
    );
  }

  async function send(row: ClaimedDelivery): Promise<SendResult> {
    let pinned: NonNullable<Awaited<ReturnType<typeof vetWebhookUrl>>>[number] | null;
    try {
      // WH-13: the URL is judged again before every attempt, and the attempt connects only to the address judged.
      pinned = (await vetWebhookUrl(row.url, config.webhookAllowPrivateNetworks))?.[0] ?? null;
    } catch (err) {
      if (!(err instanceof UnsafeWebhookUrlError)) throw err;
      return {
        statusCode: null,
        responseBody: '',
        error: `Refused before connecting: url ${err.message}`,
        durationMs: 0,
      };
    }
    const body = JSON.stringify(envelopeOf(row));
    return client.send({
      url: row.url,
      poolKey: row.endpoint_id,
      body,
      timeoutMs: config.webhookTimeoutMs,
      pinned,
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        [SIGNATURE_HEADER]: signatureHeader(body, endpointSigningSecrets(ctx, row), Math.floor(Date.now() / 1000)),
        'service-event-id': row.event_id,
        'service-delivery-id': row.id,
      },
    });
  }

  function finish(row: ClaimedDelivery, result: SendResult | null): void {
    sending -= 1;
    webhookInFlight.dec();
    const n = (perEndpoint.get(row.endpoint_id) ?? 1) - 1;
    if (n > 0) perEndpoint.set(row.endpoint_id, n);
    else perEndpoint.delete(row.endpoint_id);
    if (abandoned) return;
    if (result) webhookAttempts.inc({ outcome: attemptOutcome(result) });
    finished.push({ row, result });
    flush();
    pump();
    wake();
  }

  function flush(): void {
    if (recording || !finished.length) return;
    const batch = finished.slice(0, RECORD_BATCH_MAX);
    finished = finished.slice(batch.length);
    recording = recordWithRetry(batch)
      .catch((err) => {
        // The rows stay leased to this process: after the lease they are claimed again (at least once, WH-15).
        if (!outage(err, 'recording webhook attempts'))
          log.error(
            { err, deliveries: batch.length },
            'recording webhook attempts failed; the deliveries will be tried again after their lease',
          );
      })
      .finally(() => {
        for (const { row } of batch) release(row);
        recording = null;
        flush();
        wake();
      });
  }

  function release(row: ClaimedDelivery): void {
    inFlight.delete(row.id);
  }

  // A deadlock with another writer of the same rows (an operator's bulk update) is retried: the attempts happened.
  async function recordWithRetry(batch: Array<{ row: ClaimedDelivery; result: SendResult | null }>): Promise<void> {
    for (let tries = 1; ; tries++) {
      try {
        return await record(batch);
      } catch (err) {
        if ((err as { code?: string }).code !== '40P01' || tries >= 3) throw err;
      }
    }
  }

  async function record(batch: Array<{ row: ClaimedDelivery; result: SendResult | null }>): Promise<void> {
    const healthNeeded = batch.some(
      ({ row, result }) =>
        result &&
        (result.statusCode === 410 ||
          (row.event_type !== TEST_EVENT_TYPE && (isSuccess(result.statusCode) ? row.endpoint_failing : true))),
    );
    if (!healthNeeded) {
      // The usual case (successes of healthy endpoints): one statement, its own transaction.
      await recordOutcomes(
        pool,
        owner,
        batch.map(({ row, result }) => outcomeOf(row, result, null)),
      );
      return;
    }
    const disabled = await withTransaction(pool, async (tx) => {
      const disabledNow = new Map<string, { reason: string; justDisabled: boolean }>();
      for (const [endpointId, attempts] of groupByEndpoint(batch)) {
        const change = await updateEndpointHealth(tx, endpointId, attempts);
        if (change) disabledNow.set(endpointId, change);
      }
      await recordOutcomes(
        tx,
        owner,
        batch.map(({ row, result }) =>
          outcomeOf(row, result, result ? (disabledNow.get(row.endpoint_id)?.reason ?? null) : null),
        ),
      );
      const emails: Array<{ endpointId: string; organizationId: string; reason: string; contact: string | null }> = [];
      for (const [endpointId, change] of disabledNow) {
        if (!change.justDisabled) continue;
        // WH-7: the email job commits with the disable, once per disable.
        const contact = await queueEndpointDisabledEmail(tx, endpointId, change.reason);
        emails.push({
          endpointId,
          organizationId: batch.find((b) => b.row.endpoint_id === endpointId)!.row.organization_id,
          reason: change.reason,
          contact,
        });
      }
      return emails;
    });
    for (const d of disabled) {
      const facts = { organizationId: d.organizationId, endpointId: d.endpointId, reason: d.reason };
      if (d.contact) log.info(facts, 'webhook endpoint disabled; the technical contact will be emailed');
      else log.warn(facts, 'webhook endpoint disabled; the organization has no contact email, so nobody is emailed');
    }
  }

  // WH-6: 410 Gone disables at once; other failures run the endpoint's failure clock; a success stops it; test
  // pings never touch the clock. Returns the reason when the endpoint is disabled by these attempts.
  async function updateEndpointHealth(
    tx: pg.PoolClient,
    endpointId: string,
    attempts: Array<{ row: ClaimedDelivery; result: SendResult }>,
  ) {
    if (attempts.some((a) => a.result.statusCode === 410)) {
      const reason = 'The endpoint answered 410 Gone';
      return { reason, justDisabled: await disableEndpoint(tx, endpointId, reason) };
    }
    const counted = attempts.filter((a) => a.row.event_type !== TEST_EVENT_TYPE);
    if (!counted.length) return null;
    if (counted.some((a) => isSuccess(a.result.statusCode))) {
      if (counted[0]!.row.endpoint_failing) await clearEndpointFailing(tx, endpointId);
      return null;
    }
    const reason = await markEndpointFailing(tx, endpointId, config.webhookDisableAfterHours);
    return reason ? { reason, justDisabled: true } : null;
  }

  function outcomeOf(
    row: ClaimedDelivery,
    result: SendResult | null,
    endpointDisabledReason: string | null,
  ): DeliveryOutcome {
    if (!result) {
      const failureReason = row.endpoint_deleted
        ? 'Endpoint deleted'
        : `Endpoint disabled: ${row.endpoint_disabled_reason ?? 'disabled'}`;
      return {
        id: row.id,
        claimedAttemptCount: row.attempt_count,
        attempted: false,
        url: row.url,
        statusCode: null,
        durationMs: 0,
        responseBody: '',
        error: null,
        status: 'failed',
        retryInSeconds: null,
        failureReason,
      };
    }
    const decision = decideDelivery({
      ...result,
      attemptNumber: row.attempt_count + 1,
      autoRetry: row.auto_retry,
      scheduleSeconds: config.webhookRetryScheduleSeconds,
      endpointDisabledReason,
    });
    return {
      id: row.id,
      claimedAttemptCount: row.attempt_count,
      attempted: true,
      url: row.url,
      ...result,
      ...decision,
    };
  }

  // Leases of attempts that run long (a slow receiver) are extended well before they run out.
  const renewEvery = Math.max(100, Math.floor(config.webhookLeaseMs / 3));
  const renewer = setInterval(() => {
    const cutoff = Date.now() - renewEvery;
    const ids = [...inFlight.values()].filter((f) => f.claimedAt <= cutoff).map((f) => f.row.id);
    if (ids.length)
      renewLeases(pool, owner, ids, config.webhookLeaseMs).catch((err) => {
        if (!outage(err, 'renewing webhook leases')) log.warn({ err }, 'renewing webhook delivery leases failed');
      });
  }, renewEvery);
  const poller = setInterval(wake, POLL_INTERVAL_MS);

  // Until it works: meanwhile the one-second poll keeps deliveries moving, only later.
  function relistenLater(): void {
    if (stopping) return;
    relisten = setTimeout(
      () =>
        void listen().catch((e) => {
          if (!outage(e, 'webhook dispatcher LISTEN')) log.warn({ err: e }, 'webhook dispatcher LISTEN failed');
          relistenLater();
        }),
      RELISTEN_DELAY_MS,
    );
  }

  async function listen(): Promise<void> {
    const c = new pg.Client(pool.options as pg.ClientConfig);
    c.on('notification', () => wake());
    c.on('error', (err) => {
      if (stopping || listener !== c) return;
      if (!outage(err, 'webhook dispatcher LISTEN'))
        log.warn({ err }, 'webhook dispatcher LISTEN connection lost; reconnecting');
      listener = null;
      c.end().catch(() => undefined);
      relistenLater();
    });
    try {
      await c.connect();
      await listenOn(c, [EVENTS_CHANNEL, DELIVERIES_DUE_CHANNEL]);
    } catch (err) {
      await c.end().catch(() => undefined);
      throw err;
    }
    if (stopping) {
      await c.end().catch(() => undefined);
      return;
    }
    listener = c;
    wake();
  }

  try {
    await listen();
  } catch (err) {
    clearInterval(renewer);
    clearInterval(poller);
    await client.close();
    throw err;
  }

  return {
    owner,
    wake,
    async stop(graceMs = 5000) {
      if (stopping) return;
      stopping = true;
      clearInterval(poller);
      if (relisten) clearTimeout(relisten);
      await listener?.end().catch(() => undefined);
      // Rows claimed but not started go back to the other processes now rather than after their lease.
      const unstarted = [...queued.values()].flat();
      queued.clear();
      for (const row of unstarted) inFlight.delete(row.id);
      if (unstarted.length)
        await releaseLeases(
          pool,
          owner,
          unstarted.map((r) => r.id),
        ).catch(() => undefined);
      const deadline = Date.now() + graceMs;
      while ((inFlight.size || recording || claiming || finished.length) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      clearInterval(renewer);
      abandoned = true;
      await client.close();
      await recording;
    },
  };
}

function groupByEndpoint(
  batch: Array<{ row: ClaimedDelivery; result: SendResult | null }>,
): Map<string, Array<{ row: ClaimedDelivery; result: SendResult }>> {
  const groups = new Map<string, Array<{ row: ClaimedDelivery; result: SendResult }>>();
  for (const { row, result } of batch) {
    if (!result) continue;
    const list = groups.get(row.endpoint_id) ?? [];
    list.push({ row, result });
    groups.set(row.endpoint_id, list);
  }
  return groups;
}

/** The `outcome` label of an attempt: success, http_error (a non-2xx answer), timeout, refused (WH-13) or network_error. */
export function attemptOutcome(result: SendResult): 'success' | 'http_error' | 'timeout' | 'refused' | 'network_error' {
  if (result.statusCode !== null) return isSuccess(result.statusCode) ? 'success' : 'http_error';
  if (result.error?.startsWith('Timed out')) return 'timeout';
  if (result.error?.startsWith('Refused before connecting')) return 'refused';
  return 'network_error';
}
