import { environmentOf, FilingCompliance } from './client.js';
import type { StreamStatus } from './event-stream.js';
import { newSigningSecret, SIGNATURE_HEADER, signatureHeader } from './webhooks.js';

/** Options of {@link listen}. Durations in milliseconds. */
export interface ListenOptions {
  /** The account's key (sk_live_ or sk_test_): its events are forwarded. */
  apiKey: string;
  /** The local URL that gets each event as a webhook POST, e.g. http://localhost:4000/webhooks. */
  forwardTo: string;
  /** Only these event types (default all). */
  events?: string[];
  /** The API's base address for the key's environment (default: the SDK's, see DEFAULT_BASE_URLS). */
  baseUrl?: string;
  /** The whsec_ secret to sign with (default: a new one, printed at start). */
  secret?: string;
  /** Stops listening when aborted. */
  signal?: AbortSignal;
  /** Where lines go (default console.log). */
  log?: (line: string) => void;
  /** First reconnect delay (default 1000; doubles up to 30 s). */
  reconnectDelayMs?: number;
  /** Timeout of each forward to the local URL (default 15000). */
  forwardTimeoutMs?: number;
}

/** A running listener: the secret it signs with, and a promise that settles when it stops. */
export interface ListenResult {
  secret: string;
  /** Resolves when `signal` aborts; rejects on an error retrying cannot fix (e.g. an invalid key). */
  done: Promise<void>;
}

const USER_AGENT = 'filing-compliance-cli/1.6.0';

/**
 * Brings the account's webhooks to a machine the internet cannot reach: reads the account's events from
 * GET /events/stream and POSTs each to `forwardTo` exactly as the service's webhooks would (same body, a
 * Service-Signature made with `secret`, Service-Event-Id), one at a time in commit order, printing one line per
 * event with the receiver's status. Reconnects after a drop and resumes after the last event received, so none is
 * missed. Events are not retried when the local receiver fails (the line shows it; GET /events has them all).
 */
export function listen(options: ListenOptions): ListenResult {
  const secret = options.secret ?? newSigningSecret();
  const log = options.log ?? ((line: string) => console.log(line));
  const environment = environmentOf(options.apiKey);
  const client = new FilingCompliance({
    apiKey: options.apiKey,
    ...(options.baseUrl ? { baseUrls: { [environment]: options.baseUrl } } : {}),
  });
  log(
    `Ready! Forwarding ${environment} events${options.events?.length ? ` (${options.events.join(', ')})` : ''} to ${options.forwardTo}`,
  );
  log(`Your webhook signing secret is ${secret} (verify with webhooks.constructEvent)`);

  const done = (async () => {
    const stream = client.streamEvents({
      types: options.events,
      signal: options.signal,
      reconnectDelayMs: options.reconnectDelayMs,
      onStatus: (status) => log(statusLine(status, client.baseUrl)),
    });
    for await (const item of stream) {
      const outcome = await forward(
        options.forwardTo,
        item.rawBody,
        item.id,
        secret,
        options.forwardTimeoutMs ?? 15_000,
      );
      log(`${timestamp()}  --> ${item.type} [${item.id}]  <-- [${outcome}] POST ${options.forwardTo}`);
    }
  })();
  return { secret, done };
}

async function forward(
  url: string,
  rawBody: string,
  eventId: string,
  secret: string,
  timeoutMs: number,
): Promise<string> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      body: rawBody,
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        [SIGNATURE_HEADER]: signatureHeader(rawBody, secret),
        'service-event-id': eventId,
      },
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    });
    await response.arrayBuffer().catch(() => undefined);
    return String(response.status);
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    return `error: ${e.cause?.code ?? (e.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : e.message)}`;
  }
}

function statusLine(status: StreamStatus, baseUrl: string): string {
  if (status.state === 'connected') {
    const resume = !status.lastEventId
      ? ''
      : status.lastEventId.startsWith('pos_')
        ? `, resuming from where the first connection started (${status.lastEventId})`
        : `, resuming after ${status.lastEventId}`;
    return `${timestamp()}  Connected to ${baseUrl}/events/stream${resume}`;
  }
  return `${timestamp()}  Disconnected (${status.error.message}); reconnecting in ${Math.round(status.retryInMs / 100) / 10} s`;
}

const timestamp = () => new Date().toISOString().replace('T', ' ').slice(0, 19);
