import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { type Dispatcher, Pool } from 'undici';
import { withFields } from '../../lib/objects.js';
import { isPublicAddress, type VettedAddress } from './url-guard.js';

/** Bytes of the receiver's response kept on the attempt record (WH-4). */
const RESPONSE_BODY_LIMIT = 4096;

/** What one HTTP try produced. `statusCode` is null when no response arrived (timeout, refused, reset). */
export interface SendResult {
  statusCode: number | null;
  /** First 4 KB of the response body, decoded as UTF-8 ('' when none, and always '' from a non-public address: SEC-1). */
  responseBody: string;
  error: string | null;
  durationMs: number;
  /** The response's headers (lower-case names, at most 2 KiB in all), kept only where the body is (SEC-1, PORTAL-21). */
  responseHeaders?: Record<string, string>;
}

/** One webhook POST: the exact body bytes, headers, a timeout (ms), and the vetted address to connect to. */
export interface SendRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  /** null: resolve the host normally (private networks allowed). Otherwise connect only to this address. */
  pinned: VettedAddress | null;
  /**
   * Whose connections to use: attempts with the same key share one keep-alive pool. The dispatcher passes the
   * endpoint id, so endpoints on one host (a receiver serving several integrations) never queue behind each
   * other's slow answers (WH-17, WH-18). Default: the URL's origin.
   */
  poolKey?: string;
  /** Whether a response body from this address may be kept (default: only public addresses, SEC-1). */
  keepBodyFrom?: (address: string) => boolean;
}

/** Origins whose keep-alive pool is kept at most; the least recently used pool is closed beyond it (WH-18). */
const MAX_POOLS = 1000;
/** A pool unused this long (ms) is closed with its connections. */
const POOL_IDLE_MS = 60_000;

interface PoolEntry {
  pool: Pool;
  lastUsed: number;
}

/**
 * Keep-alive connection pools, one per endpoint, receiver origin and vetted address (WH-18): consecutive attempts to
 * one receiver reuse its connections instead of opening one (and a TLS handshake) per attempt. A pool opens at most
 * `connectionsPerOrigin` connections, the per-endpoint cap, so in-flight attempts never wait on each other.
 * Pools are bounded in number ({@link MAX_POOLS}) and closed when idle ({@link POOL_IDLE_MS}).
 */
export class WebhookClient {
  private readonly pools = new Map<string, PoolEntry>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly deadlines = new Deadlines();

  constructor(private readonly connectionsPerOrigin: number) {
    this.sweeper = setInterval(() => this.closeIdle(), POOL_IDLE_MS / 2);
    this.sweeper.unref();
  }

  /**
   * POSTs a webhook and never throws: every failure becomes `error`. The connection goes to the address vetted
   * just before (a custom `connect.lookup`), so a host that re-resolves to an internal address between check and
   * connect is never reached (DNS rebinding; WH-13). TLS still verifies the certificate against the URL's host
   * name. Redirects are not followed (a 3xx is a failed attempt). The whole exchange, response body included,
   * must finish within `timeoutMs`.
   */
  async send(req: SendRequest): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const url = new URL(req.url);
      // Unpinned (private networks allowed): resolve here and connect to that address, so what is stored below is
      // decided by the address actually reached.
      const target = req.pinned ?? (await resolveHost(url.hostname));
      const pool = this.poolFor(req.poolKey ?? url.origin, url.origin, target);
      const deadline = this.deadlines.start(req.timeoutMs);
      try {
        const res = await pool.request({
          method: 'POST',
          path: `${url.pathname}${url.search}`,
          body: req.body,
          headers: withFields(req.headers, { host: url.host }),
          signal: deadline.signal,
        });
        const prefix = await readPrefix(res.body, RESPONSE_BODY_LIMIT);
        // SEC-1: what an internal service answers is never stored, so an endpoint cannot be used to read it back.
        const kept = (req.keepBodyFrom ?? isPublicAddress)(target.address);
        const result: SendResult = {
          statusCode: res.statusCode,
          responseBody: kept ? prefix : '',
          error: null,
          durationMs: elapsed(),
        };
        if (kept) result.responseHeaders = boundedHeaders(res.headers);
        return result;
      } finally {
        this.deadlines.end(deadline);
      }
    } catch (err) {
      return { statusCode: null, responseBody: '', error: describeError(err, req.timeoutMs), durationMs: elapsed() };
    }
  }

  /** Closes every pool, cutting attempts still under way (their rows come back after the lease). */
  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.deadlines.close();
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.allSettled(pools.map((p) => p.pool.destroy()));
  }

  private poolFor(owner: string, origin: string, pinned: VettedAddress): Pool {
    const key = `${owner} ${origin} ${pinned.address}`;
    const found = this.pools.get(key);
    const now = Date.now();
    if (found) {
      found.lastUsed = now;
      // Map order is insertion order: re-inserting keeps the least recently used first.
      this.pools.delete(key);
      this.pools.set(key, found);
      return found.pool;
    }
    if (this.pools.size >= MAX_POOLS) {
      const [oldestKey, oldest] = this.pools.entries().next().value as [string, PoolEntry];
      this.pools.delete(oldestKey);
      oldest.pool.close().catch(() => undefined);
    }
    const pool = new Pool(origin, {
      connections: this.connectionsPerOrigin,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      connect: { lookup: pinnedLookup(pinned) },
    });
    this.pools.set(key, { pool, lastUsed: now });
    return pool;
  }

  private closeIdle(): void {
    const cutoff = Date.now() - POOL_IDLE_MS;
    for (const [key, entry] of this.pools) {
      if (entry.lastUsed < cutoff) {
        this.pools.delete(key);
        entry.pool.close().catch(() => undefined);
      }
    }
  }
}

function pinnedLookup(pinned: VettedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options?.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  };
}

// The first address of a host (a literal IP as it is), for an unpinned attempt.
async function resolveHost(hostname: string): Promise<VettedAddress> {
  const host = hostname.replace(/^\[|\]$/g, '');
  const family = isIP(host);
  if (family) return { address: host, family: family as 4 | 6 };
  const found = await dnsLookup(host);
  return { address: found.address, family: found.family as 4 | 6 };
}

// Reads at most `limit` bytes, then drops the rest of the stream (a receiver may answer with megabytes). A body
// read to its end leaves the connection reusable. Stream events, not an async iterator: this runs for every
// attempt, and the iterator's promises per chunk cost more than the few bytes a receiver usually answers.
function readPrefix(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).subarray(0, limit).toString('utf8');
      // PostgreSQL text cannot hold NUL bytes.
      // biome-ignore lint/suspicious/noControlCharactersInRegex: PostgreSQL text cannot hold NUL, so it is dropped.
      resolve(text.includes('\u0000') ? text.replace(/\u0000/g, '') : text);
    };
    body.on('data', (chunk: Buffer) => {
      if (settled) return;
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) {
        finish();
        body.destroy();
      }
    });
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      reject(err);
    };
    body.on('end', finish);
    body.on('error', fail);
    // A body closed before its end without an error of its own must not leave the attempt waiting forever.
    body.on('close', () => fail(new Error('the response body closed before its end')));
  });
}

/**
 * Deadlines of the attempts under way, checked by one timer for all of them: an attempt's controller is aborted once
 * its time is up (within DEADLINE_CHECK_MS after it), which undici turns into an AbortError for the request or its
 * body. One timer instead of a timeout signal per attempt (`AbortSignal.timeout`), which cost a timer and its
 * clean-up for each.
 */
class Deadlines {
  private readonly due = new Map<AbortController, number>();
  private timer: NodeJS.Timeout | null = null;

  start(timeoutMs: number): AbortController {
    const controller = new AbortController();
    this.due.set(controller, performance.now() + timeoutMs);
    if (!this.timer) {
      this.timer = setInterval(() => this.check(), DEADLINE_CHECK_MS);
      this.timer.unref();
    }
    return controller;
  }

  end(controller: AbortController): void {
    this.due.delete(controller);
    if (!this.due.size) this.close();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private check(): void {
    const now = performance.now();
    for (const [controller, at] of this.due) {
      if (at > now) continue;
      this.due.delete(controller);
      controller.abort();
    }
    if (!this.due.size) this.close();
  }
}

/** Bytes of response headers kept on the attempt record (names and values together); the rest are left out. */
const RESPONSE_HEADERS_LIMIT = 2048;

/**
 * The response's headers in arrival order, a repeated header's values joined by ', ', within RESPONSE_HEADERS_LIMIT
 * bytes: a header that would pass it is left out and the next ones still fit if they can (PORTAL-21).
 */
function boundedHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  let size = 0;
  for (const [name, raw] of Object.entries(headers)) {
    if (raw === undefined) continue;
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    const bytes = Buffer.byteLength(name) + Buffer.byteLength(value);
    if (size + bytes > RESPONSE_HEADERS_LIMIT) continue;
    size += bytes;
    out[name.toLowerCase()] = value;
  }
  return out;
}

/** How often the attempts' deadlines are checked (ms): an attempt is cut at most this long after its time is up. */
const DEADLINE_CHECK_MS = 25;

function describeError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError')
    return `Timed out after ${timeoutMs} ms without a complete response`;
  const code = e?.code ?? e?.cause?.code;
  const message = e?.cause?.message ?? e?.message ?? String(err);
  return code ? `${code}: ${message}` : message;
}

/** One POST on a connection of its own, closed afterwards (a client of one use; see {@link WebhookClient.send}). */
export async function sendWebhook(req: SendRequest): Promise<SendResult> {
  const client = new WebhookClient(1);
  try {
    return await client.send(req);
  } finally {
    await client.close();
  }
}
