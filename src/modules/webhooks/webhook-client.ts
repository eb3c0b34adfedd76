import { lookup as dnsLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { isPublicAddress, type VettedAddress } from './url-guard.js';

/** Bytes of the receiver's response kept on the attempt record (issue 4 item 7). */
export const RESPONSE_BODY_LIMIT = 4096;

/** What one HTTP try produced. `statusCode` is null when no response arrived (timeout, refused, reset). */
export interface SendResult {
  statusCode: number | null;
  /** First 4 KB of the response body, decoded as UTF-8 ('' when none, and always '' from a non-public address: WH-16). */
  responseBody: string;
  error: string | null;
  durationMs: number;
}

/** One webhook POST: the exact body bytes, headers, a timeout (ms), and the vetted address to connect to. */
export interface SendRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  /** null: resolve the host normally (private networks allowed). Otherwise connect only to this address. */
  pinned: VettedAddress | null;
  /** Whether a response body from this address may be kept (default: only public addresses, WH-16). */
  keepBodyFrom?: (address: string) => boolean;
}

/**
 * POSTs a webhook with undici and never throws: every failure becomes `error`. The connection goes to the
 * address vetted just before (a custom `connect.lookup`), so a host that re-resolves to an internal address
 * between check and connect is never reached (DNS rebinding; issue 4 item 8). TLS still verifies the
 * certificate against the URL's host name. Redirects are not followed (a 3xx is a failed attempt).
 * The whole exchange, response body included, must finish within `timeoutMs`.
 */
export async function sendWebhook(req: SendRequest): Promise<SendResult> {
  const started = performance.now();
  // Every address the connection may have used; a literal IP in the URL is connected to without a lookup.
  const addresses: string[] = [];
  const literal = new URL(req.url).hostname.replace(/^\[|\]$/g, '');
  if (isIP(literal)) addresses.push(literal);
  const dispatcher = new Agent({ connect: { lookup: req.pinned ? pinnedLookup(req.pinned) : recordingLookup(addresses) }, pipelining: 0 });
  if (req.pinned) addresses.push(req.pinned.address);
  const keepBodyFrom = req.keepBodyFrom ?? isPublicAddress;
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const res = await request(req.url, {
      method: 'POST',
      body: req.body,
      headers: req.headers,
      dispatcher,
      signal: AbortSignal.timeout(req.timeoutMs),
    });
    // WH-16: what an internal service answers is never stored, so an endpoint cannot be used to read it back.
    const keep = addresses.length > 0 && addresses.every(keepBodyFrom);
    const responseBody = keep ? await readPrefix(res.body, RESPONSE_BODY_LIMIT) : await discard(res.body);
    return { statusCode: res.statusCode, responseBody, error: null, durationMs: elapsed() };
  } catch (err) {
    return { statusCode: null, responseBody: '', error: describeError(err, req.timeoutMs), durationMs: elapsed() };
  } finally {
    dispatcher.destroy().catch(() => undefined);
  }
}

function pinnedLookup(pinned: VettedAddress): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  }) as LookupFunction;
}

// node:dns lookup that records the addresses it hands to the connection.
function recordingLookup(into: string[]): LookupFunction {
  return ((hostname: string, options: object, callback: (...args: unknown[]) => void) => {
    dnsLookup(hostname, options ?? {}, (err, address, family) => {
      if (!err) for (const a of Array.isArray(address) ? address : [{ address }]) into.push(a.address);
      callback(err, address, family);
    });
  }) as LookupFunction;
}

async function discard(body: { destroy(): void; on(event: 'error', listener: () => void): unknown }): Promise<string> {
  // Destroying an unread body rejects it with an abort: expected here, nothing to report.
  body.on('error', () => undefined);
  body.destroy();
  return '';
}

// Reads at most `limit` bytes, then drops the rest of the stream (a receiver may answer with megabytes).
async function readPrefix(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) break;
  }
  if (size >= limit) body.destroy();
  // PostgreSQL text cannot hold NUL bytes.
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8').replace(/\u0000/g, '');
}

function describeError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `Timed out after ${timeoutMs} ms without a complete response`;
  const code = e?.code ?? e?.cause?.code;
  const message = e?.cause?.message ?? e?.message ?? String(err);
  return code ? `${code}: ${message}` : message;
}
