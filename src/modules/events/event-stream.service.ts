import type pg from 'pg';
import { Gauge } from 'prom-client';
import type { AppContext, Tenant } from '../../context.js';
import { AppError, ValidationError } from '../../lib/errors.js';
import { registry } from '../../lib/metrics.js';
import { EventStreamHub } from './event-stream-hub.js';
import * as repo from './event-stream.repo.js';
import { StreamKeys } from './stream-keys.js';
import { LISTED_EVENT_TYPES, type EventEnvelope } from './events.service.js';

/*
 * GET /events/stream: each open stream follows its tenant's events in commit order (event-stream.repo.ts) from a
 * start position, woken by the process's LISTEN connection (event-stream-hub.ts) and, as a safety net against a
 * lost notification, at every heartbeat. A stream only ever moves its position past rows that can no longer be
 * overtaken, so a client that reconnects with the id of the last event it got (Last-Event-ID) misses nothing; one
 * that got no event yet reconnects with the start position the stream sent first (positionCursor, EVT-8).
 */

/** Rows read per query while catching up. */
const BATCH = 100;
/** Delay before looking again when rows wait behind a transaction still running (ms). */
const HELD_RETRY_MS = 200;

const openStreams = new Gauge({
  name: 'event_streams_open',
  help: 'Open GET /events/stream connections, by environment',
  labelNames: ['environment'] as const,
  registers: [registry],
});

/** Where a stream writes: one event at a time; rejects when the client is gone. */
export type EventSink = (event: EventEnvelope) => Promise<void>;

/**
 * `types` of GET /events/stream: a comma-separated list of event types, or undefined for all.
 * @returns the set of types, or null for every type. @throws ValidationError (400) naming `types` and the bad value.
 */
export function parseStreamTypes(types: string | undefined): Set<string> | null {
  if (types === undefined) return null;
  const list = types
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  const unknown = list.filter((t) => !LISTED_EVENT_TYPES.includes(t));
  if (!list.length || unknown.length) {
    throw new ValidationError([
      {
        field: 'types',
        message: `must list event types separated by commas, from: ${LISTED_EVENT_TYPES.join(', ')}${unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''}`,
      },
    ]);
  }
  return new Set(list);
}

/** The SSE event name of the message that gives a stream's start position (EVT-8); it is not an event. */
export const POSITION_MESSAGE = 'position';

const POSITION_CURSOR = /^pos_(\d{1,20})$/;

/**
 * The Last-Event-ID value of a start position (EVT-8): `pos_` and the transaction id it starts at. Sent as the `id`
 * of the first message of a stream opened without Last-Event-ID, so a client that loses the connection before any
 * event arrives resumes from where it started, not from the moment it reconnects.
 */
export function positionCursor(position: repo.StreamPosition): string {
  return `pos_${position.xactId}`;
}

/**
 * Where a stream starts (EVT-8): after the event `lastEventId` (a reconnect), at a start position the stream gave
 * (`pos_…`, a reconnect before any event arrived), else at the current position.
 * @throws AppError not_found (404) naming the Last-Event-ID header when the tenant has no such event, or the
 *   position is one no stream can have given yet.
 */
export async function startPosition(
  db: pg.Pool,
  tenant: Tenant,
  lastEventId: string | undefined,
): Promise<repo.StreamPosition> {
  if (!lastEventId) return repo.currentPosition(db);
  const cursor = POSITION_CURSOR.exec(lastEventId);
  const position = cursor
    ? BigInt(cursor[1]) <= BigInt(await repo.transactionHorizon(db))
      ? { xactId: BigInt(cursor[1]).toString(), id: '' }
      : null
    : await repo.positionOf(db, tenant, lastEventId);
  if (!position) {
    const what = cursor ? 'stream position' : 'event';
    throw new AppError('not_found', `No such ${what}: '${lastEventId}' (Last-Event-ID)`, {
      errors: [{ field: 'headers.last-event-id', message: `no ${what} '${lastEventId}' exists in this environment` }],
    });
  }
  return position;
}

/** One open stream: reads the tenant's events after its position and hands each (matching `types`) to the sink. */
export class EventStreamSession {
  private running = false;
  private again = false;
  private closed = false;
  private held: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: pg.Pool,
    private readonly tenant: Tenant,
    private position: repo.StreamPosition,
    private readonly types: Set<string> | null,
    private readonly sink: EventSink,
    private readonly onFailure: (err: unknown) => void,
  ) {}

  /** Looks for new events now (or right after the catch-up under way). Never throws. */
  wake(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.drain()
      .catch((err) => {
        if (!this.closed) this.onFailure(err);
      })
      .finally(() => {
        this.running = false;
      });
  }

  /** Stops the session; a catch-up under way ends at its next row. */
  close(): void {
    this.closed = true;
    if (this.held) clearTimeout(this.held);
  }

  private async drain(): Promise<void> {
    do {
      this.again = false;
      const waiting = await this.catchUp();
      if (waiting && !this.held && !this.closed) {
        this.held = setTimeout(() => {
          this.held = null;
          this.wake();
        }, HELD_RETRY_MS);
      }
    } while (this.again && !this.closed);
  }

  // Sends every row that can no longer be overtaken; true when rows are waiting behind a running transaction.
  // Rows held back by the cheap boundary are read again with the precise one before waiting (repo: BOUNDARY).
  private async catchUp(): Promise<boolean> {
    let precise = false;
    for (;;) {
      const rows = await repo.eventsAfter(this.db, this.tenant, this.position, BATCH, precise);
      let held = false;
      for (const row of rows) {
        if (this.closed) return false;
        if (BigInt(row.xact_id) >= BigInt(row.boundary)) {
          held = true;
          break;
        }
        this.position = { xactId: row.xact_id, id: row.id };
        if (!this.types || this.types.has(row.type)) {
          await this.sink({ id: row.id, type: row.type, createdAt: row.created_at.toISOString(), data: row.data });
        }
      }
      if (held && precise) return true;
      if (held) precise = true;
      else if (rows.length < BATCH) return false;
    }
  }
}

/**
 * The event streams of one app: the LISTEN hub, open streams per API key (bounded, and ended when the key stops
 * resolving: EVT-9), and their closers. One per AppContext (streamsOf), shared by the live and test mounts.
 */
export class EventStreams {
  readonly hub: EventStreamHub;
  /** The open streams by their key's hash (EVT-9). */
  readonly keys: StreamKeys;

  constructor(private readonly ctx: AppContext) {
    this.keys = new StreamKeys(ctx.pool, ctx.log, ctx.config.eventStreamHeartbeatSeconds * 1000);
    this.hub = new EventStreamHub(ctx.pool, ctx.log, (keyHash) => this.keys.recheck(keyHash));
  }

  /**
   * Counts a new stream of the API key (identified by its hash). `close` ends the stream cleanly: at server shutdown,
   * or once its key no longer resolves (EVT-9).
   * @returns the function that releases it (idempotent).
   * @throws AppError rate_limited (429) when the key already holds EVENT_STREAM_MAX_PER_KEY streams.
   */
  open(keyHash: string, tenant: Tenant, close: () => void): () => void {
    const max = this.ctx.config.eventStreamMaxPerKey;
    if (this.keys.count(keyHash) >= max)
      throw new AppError(
        'rate_limited',
        `Too many event streams are open with this API key (at most ${max}); close one or retry later`,
      );
    const forget = this.keys.add(keyHash, close);
    openStreams.inc({ environment: tenant.environment });
    let released = false;
    return () => {
      if (released) return;
      released = true;
      forget();
      openStreams.dec({ environment: tenant.environment });
    };
  }

  /**
   * Ends every open stream and the LISTEN connection (server shutdown: open streams would hold it up). An app built
   * later on the same context gets new EventStreams.
   */
  async closeAll(): Promise<void> {
    if (streams.get(this.ctx) === this) streams.delete(this.ctx);
    this.keys.endAll();
    await this.hub.close();
  }
}

const streams = new WeakMap<AppContext, EventStreams>();

/** The EventStreams of an app context, made on first use. */
export function streamsOf(ctx: AppContext): EventStreams {
  let s = streams.get(ctx);
  if (!s) {
    s = new EventStreams(ctx);
    streams.set(ctx, s);
  }
  return s;
}
