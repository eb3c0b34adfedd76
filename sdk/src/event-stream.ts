import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ConnectionError, errorFor, FilingComplianceError, RedirectError } from './errors.js';
import { withoutRedirects } from './redirects.js';
import type { WebhookEvent } from './webhooks.js';

/** One event read from GET /events/stream. */
export interface StreamedEvent {
  /** The event id (evt_…); also the stream position to resume after. */
  id: string;
  /** The event type, e.g. filing.status_changed. */
  type: string;
  /** The envelope exactly as sent: the body a webhook POST of this event would carry. */
  rawBody: string;
  /** The parsed envelope. */
  event: WebhookEvent;
}

/** What the stream reports about its connection (for progress output; events arrive through iteration). */
export type StreamStatus =
  | { state: 'connected'; lastEventId: string | null }
  | { state: 'disconnected'; error: Error; retryInMs: number };

/** Options of {@link streamEvents}. Durations in milliseconds. */
export interface EventStreamOptions {
  /** Only these event types (default: all). */
  types?: string[];
  /**
   * Resume after this event id, or from this start position (`pos_…`) (default: from now on). Updated as messages
   * arrive (the stream's start position first, then each event id) and sent as Last-Event-ID on every reconnect.
   */
  lastEventId?: string;
  /** Ends the iteration (and the connection) when aborted. */
  signal?: AbortSignal;
  /** First wait before reconnecting after the connection dropped; doubles up to 30 s, back to this after a success. Default 1000. */
  reconnectDelayMs?: number;
  /** Reconnect when nothing at all (not even a heartbeat) arrived for this long. Default 60000. */
  idleTimeoutMs?: number;
  /** Told of every connect and disconnect. */
  onStatus?: (status: StreamStatus) => void;
}

/** How the stream reaches the API: the URL of GET /events/stream and the headers (API key) to send. */
export interface StreamTarget {
  url: string;
  headers: Record<string, string>;
  fetch: typeof fetch;
}

const MAX_RECONNECT_DELAY_MS = 30_000;
/** The SSE event name of the stream's start-position message. */
const POSITION_MESSAGE = 'position';

/**
 * The tenant's events as they are committed, for as long as the caller iterates: connects to GET /events/stream,
 * reconnects after any drop with `Last-Event-ID` set to the last event received, or before any event to the start
 * position the first connection was given (so none is missed), and stops when
 * `signal` aborts or the caller breaks out of the loop. An answer the API will not change its mind about (an invalid
 * or revoked key, a bad `types`, an unknown lastEventId) throws its typed error, and a redirect throws RedirectError
 * (never followed: the key would go with it); 429, 5xx and network failures are retried.
 */
export async function* streamEvents(
  target: StreamTarget,
  options: EventStreamOptions = {},
): AsyncGenerator<StreamedEvent> {
  const baseDelay = options.reconnectDelayMs ?? 1000;
  let delay = baseDelay;
  let lastEventId = options.lastEventId ?? null;
  const url = new URL(target.url);
  if (options.types?.length) url.searchParams.set('types', options.types.join(','));

  while (!options.signal?.aborted) {
    const connection = new AbortController();
    const abort = () => connection.abort();
    options.signal?.addEventListener('abort', abort, { once: true });
    try {
      const body = await connect(target, url, lastEventId, connection.signal);
      options.onStatus?.({ state: 'connected', lastEventId });
      delay = baseDelay;
      for await (const message of messages(body, connection, options.idleTimeoutMs ?? 60_000)) {
        if (!message.id) continue;
        lastEventId = message.id;
        // The start position of a stream opened without Last-Event-ID: not an event, only where to resume from
        // when the connection drops before the first event arrives.
        if (message.event === POSITION_MESSAGE) continue;
        yield {
          id: message.id,
          type: message.event ?? 'message',
          rawBody: message.data,
          event: JSON.parse(message.data) as WebhookEvent,
        };
      }
      throw new ConnectionError('The event stream ended');
    } catch (err) {
      if (options.signal?.aborted) return;
      if (err instanceof RedirectError) throw err;
      if (err instanceof FilingComplianceError && err.status < 500 && err.status !== 429) throw err;
      const error = err instanceof Error ? err : new Error(String(err));
      options.onStatus?.({ state: 'disconnected', error, retryInMs: delay });
      await sleep(delay, options.signal);
      delay = Math.min(delay * 2, MAX_RECONNECT_DELAY_MS);
    } finally {
      options.signal?.removeEventListener('abort', abort);
      connection.abort();
    }
  }
}

async function connect(
  target: StreamTarget,
  url: URL,
  lastEventId: string | null,
  signal: AbortSignal,
): Promise<ReadableStream<Uint8Array>> {
  let response: Response;
  try {
    response = await withoutRedirects(target.fetch)(url, {
      headers: {
        ...target.headers,
        accept: 'text/event-stream',
        ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
      },
      signal,
    });
  } catch (err) {
    if (err instanceof RedirectError) throw err;
    throw new ConnectionError(`Could not connect to ${url.origin}: ${(err as Error).message}`, { cause: err });
  }
  if (!response.ok) throw errorFor(response.status, await response.json().catch(() => null));
  if (!response.body) throw new ConnectionError('The event stream answered without a body');
  return response.body;
}

// The messages of one connection; aborts it when nothing arrives for idleMs. The body is read with a reader, which
// every fetch implementation's stream has (not all of them can be iterated with for await).
async function* messages(
  body: ReadableStream<Uint8Array>,
  connection: AbortController,
  idleMs: number,
): AsyncGenerator<EventSourceMessage> {
  const queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (m) => queue.push(m) });
  const decoder = new TextDecoder();
  let idle = setTimeout(() => connection.abort(), idleMs);
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value: chunk } = await reader.read();
      if (done) return;
      clearTimeout(idle);
      idle = setTimeout(() => connection.abort(), idleMs);
      parser.feed(decoder.decode(chunk, { stream: true }));
      while (queue.length) yield queue.shift()!;
    }
  } finally {
    clearTimeout(idle);
    // A consumer that stops early cancels the rest of the stream.
    reader.cancel().catch(() => undefined);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
