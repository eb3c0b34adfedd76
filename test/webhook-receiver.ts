import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import Stripe from 'stripe';

/** One request the receiver got, with the raw body exactly as sent. */
export interface ReceivedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  /** The parsed envelope. */
  event: { id: string; type: string; createdAt: string; data: Record<string, any> };
}

/** How to answer request number `n` (1-based): a status and body, or 'hang' to never answer. */
export type Responder = (req: ReceivedRequest, n: number) => { status: number; body?: string } | 'hang';

/** A real HTTP webhook receiver on 127.0.0.1 (node:http, port 0). */
export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Replaceable at any time; answers 200 `ok` by default. */
  respond: Responder;
  close(): Promise<void>;
}

export async function startReceiver(respond: Responder = () => ({ status: 200, body: 'ok' })): Promise<Receiver> {
  const receiver: Receiver = { url: '', port: 0, requests: [], respond, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let event: ReceivedRequest['event'];
      try {
        event = JSON.parse(rawBody);
      } catch {
        event = { id: '', type: '', createdAt: '', data: {} };
      }
      const received: ReceivedRequest = { path: req.url ?? '/', headers: req.headers, rawBody, event };
      receiver.requests.push(received);
      const answer = receiver.respond(received, receiver.requests.length);
      if (answer === 'hang') return;
      res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hooks`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

const stripe = new Stripe('sk_test_x');

/**
 * Verifies a received request the way integrators will: Stripe's `webhooks.constructEvent` with the raw body,
 * the Service-Signature header value as is, and the endpoint secret. Throws when the signature does not verify.
 */
export function verifyWithStripe(req: ReceivedRequest, secret: string): unknown {
  return stripe.webhooks.constructEvent(req.rawBody, String(req.headers['service-signature']), secret);
}

/** Polls `check` every 50 ms until it returns a truthy value; fails after `timeoutMs` with `what`. */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A loopback port that refuses connections: 1 (tcpmux), privileged and unused, so no test server or other process of
 * ours can be listening there, unlike a port a test server just closed, which anything may take again. Checked, so
 * a machine where something does listen there fails with the reason.
 */
export async function refusedPort(): Promise<number> {
  const port = 1;
  const refused = await new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
  if (!refused)
    throw new Error(
      `127.0.0.1:${port} does not refuse connections on this machine; tests of a refused connection need a port nothing listens on`,
    );
  return port;
}
