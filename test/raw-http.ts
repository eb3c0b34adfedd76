import http from 'node:http';
import net from 'node:net';

/*
 * HTTP/1.1 written by hand onto a socket, for tests that need what no client library sends: bodies that stop,
 * chunked bodies without their end, `Expect: 100-continue` never followed up, headers never finished, bytes that
 * are not HTTP. Each exchange opens a connection of its own (`Connection: close`).
 */

/** A request as written on the wire. `host` null sends no Host header; `body` is sent as is (Content-Length). */
export interface WireRequest {
  method: string;
  /** The request target as written: a path with its query, already encoded (or anything at all). */
  target: string;
  host: string | null;
  headers: Record<string, string>;
  body?: Buffer;
  /** Written instead of the request line and headers built from the fields above (bytes that may not be HTTP). */
  raw?: Buffer;
}

/**
 * How the client sends: `whole`; `stall` sends the head and `keep` (0-1) of the body announced by Content-Length,
 * then nothing; `chunked-stall` one chunk of a chunked body without the last chunk; `expect-stall` the head with
 * `Expect: 100-continue` and never the body; `trickle` the body in three parts a pause apart; `headers-stall` the head
 * without its blank line; `abandon` part of the body, then closes the connection (no answer is expected).
 */
export type Transport =
  | { kind: 'whole' }
  | { kind: 'stall'; keep: number }
  | { kind: 'chunked-stall'; keep: number }
  | { kind: 'expect-stall' }
  | { kind: 'trickle'; pauseMs: number }
  | { kind: 'headers-stall' }
  | { kind: 'abandon'; keep: number };

/**
 * What came back: the final status (a `100 Continue` is skipped) and how long after the client's last byte it
 * arrived; `status` null with `outcome` `timeout` (nothing within the wait) or `closed` (the connection ended without
 * a status line), or `abandoned` (the client left).
 */
export interface Exchange {
  status: number | null;
  outcome: 'answered' | 'timeout' | 'closed' | 'abandoned';
  afterLastByteMs: number;
}

/** The head of `w` (request line and headers) with `extra` headers, ending with the blank line. */
function head(w: WireRequest, extra: Record<string, string>): string {
  const lines = [`${w.method} ${w.target} HTTP/1.1`];
  if (w.host !== null) lines.push(`Host: ${w.host}`);
  for (const [k, v] of Object.entries({ ...w.headers, connection: 'close', ...extra })) lines.push(`${k}: ${v}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/**
 * Sends `w` to 127.0.0.1:`port` as `how` says and waits up to `answerWithinMs` after the last byte written for the
 * status line. The rest of the answer is read in the background (at most a few seconds) and the connection closed.
 */
export function exchange(port: number, w: WireRequest, how: Transport, answerWithinMs: number): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    let lastByteAt = Date.now();
    let received = '';
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    const answerTimer = setTimeout(() => settle(null, 'timeout'), answerWithinMs);
    const settle = (status: number | null, outcome: Exchange['outcome']) => {
      if (settled) return;
      settled = true;
      clearTimeout(answerTimer);
      for (const t of timers) clearTimeout(t);
      resolve({ status, outcome, afterLastByteMs: Date.now() - lastByteAt });
      // The answer's rest is read, not cut: a client that leaves at once is the `abandon` transport's part.
      if (outcome === 'answered') setTimeout(() => socket.destroy(), 3000).unref();
      else socket.destroy();
    };
    const write = (chunk: string | Buffer) => {
      if (settled || socket.destroyed) return;
      socket.write(chunk);
      lastByteAt = Date.now();
      answerTimer.refresh();
    };
    const later = (ms: number, fn: () => void) => timers.push(setTimeout(fn, ms));

    socket.on('data', (chunk) => {
      if (settled) return;
      received += chunk.toString('latin1');
      for (;;) {
        const end = received.indexOf('\r\n');
        if (end < 0) return;
        const m = /^HTTP\/1\.[01] (\d{3})/.exec(received);
        if (!m) return settle(null, 'closed');
        const status = Number(m[1]);
        if (status !== 100) return settle(status, 'answered');
        // An interim 100 Continue: its blank line ends it, the final answer follows.
        const blank = received.indexOf('\r\n\r\n');
        if (blank < 0) return;
        received = received.slice(blank + 4);
      }
    });
    socket.on('error', () => settle(null, 'closed'));
    socket.on('close', () => settle(null, 'closed'));

    socket.on('connect', () => {
      lastByteAt = Date.now();
      if (w.raw) return write(w.raw);
      const body = w.body ?? Buffer.alloc(0);
      switch (how.kind) {
        case 'whole':
          return write(Buffer.concat([Buffer.from(head(w, { 'content-length': String(body.length) })), body]));
        case 'stall':
        case 'abandon': {
          // A body is announced even for a request that has none: the service must not wait for it unanswered.
          const announced = body.length || 64;
          const sent = (body.length ? body : Buffer.alloc(64, 'a')).subarray(0, Math.floor(announced * how.keep));
          write(Buffer.concat([Buffer.from(head(w, { 'content-length': String(announced) })), sent]));
          if (how.kind === 'abandon') later(50, () => settle(null, 'abandoned'));
          return;
        }
        case 'chunked-stall': {
          const sent = body.subarray(0, Math.floor(body.length * how.keep));
          const chunk = sent.length ? `${sent.length.toString(16)}\r\n${sent.toString('latin1')}\r\n` : '';
          return write(Buffer.from(head(w, { 'transfer-encoding': 'chunked' }) + chunk, 'latin1'));
        }
        case 'expect-stall':
          return write(head(w, { 'content-length': String(body.length || 64), expect: '100-continue' }));
        case 'trickle': {
          write(head(w, { 'content-length': String(body.length) }));
          const third = Math.ceil(body.length / 3);
          for (let i = 0; i < 3; i++)
            later(how.pauseMs * (i + 1), () => write(body.subarray(i * third, (i + 1) * third)));
          return;
        }
        case 'headers-stall':
          return write(head(w, {}).slice(0, -2));
      }
    });
  });
}

/** A whole answer: status, headers (lower-case names; set-cookie as a list) and body as text. */
export interface Page {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * An ordinary request through node:http (which may set Host, unlike fetch), read whole: for the setup of tests that
 * then send hostile requests with {@link exchange}.
 */
export function request(
  port: number,
  options: { method?: string; path: string; host: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<Page> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path,
        headers: { host: options.host, ...options.headers },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
