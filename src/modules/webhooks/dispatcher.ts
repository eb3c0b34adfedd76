import os from 'node:os';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { AppContext } from '../../context.js';
import { listenOn } from '../../lib/db.js';
import type { OutageReporter } from '../../lib/db-outage.js';
import { EVENTS_CHANNEL } from '../events/event-stream-hub.js';
import { recordAttempts, type FinishedAttempt } from './attempt-recorder.js';
import { attemptOutcome, sendAttempt } from './attempt-sender.js';
import {
  claimDueDeliveries,
  DELIVERIES_DUE_CHANNEL,
  releaseLeases,
  renewLeases,
  type ClaimedDelivery,
} from './dispatch.repo.js';
import { WebhookClient, type SendResult } from './webhook-client.js';
import { webhookAttempts, webhookInFlight } from './webhook-metrics.js';

/** How often an idle dispatcher looks for due retries and expired leases without being woken (ms). */
export const POLL_INTERVAL_MS = 1000;
/** Outcomes written per statement at most; more wait for the next write. */
export const RECORD_BATCH_MAX = 500;
/** How long to wait before opening the LISTEN connection again after it broke (ms). */
const RELISTEN_DELAY_MS = 1000;

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
  let finished: FinishedAttempt[] = [];
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
    const attempt =
      row.endpoint_deleted || row.endpoint_disabled ? Promise.resolve(null) : sendAttempt(config, ctx, client, row);
    void attempt.then(
      (result) => finish(row, result),
      (err) => {
        log.error({ err, deliveryId: row.id }, 'webhook attempt failed unexpectedly');
        finish(row, { statusCode: null, responseBody: '', error: 'Internal error before sending', durationMs: 0 });
      },
    );
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
    recording = recordAttempts({ config, pool, log, owner }, batch)
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
