import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import Stripe from 'stripe';

/** One request the stand-in received: path, form fields (Stripe's bracket notation, flat) and the Idempotency-Key. */
export interface StandInCall {
  method: string;
  path: string;
  form: Record<string, string>;
  idempotencyKey: string | null;
  authorization: string | null;
}

/**
 * A small local stand-in for the Stripe API calls the service makes (POST /v1/checkout/sessions, POST /v1/refunds),
 * reached through STRIPE_API_BASE_URL, so tests run offline. Answers like Stripe: the same Idempotency-Key gets the
 * same object back. `failRefunds` makes refunds answer a Stripe error (no retries by the client: a 400);
 * `failSessions` does the same for opening a Checkout Session.
 */
export class StripeStandIn {
  readonly calls: StandInCall[] = [];
  /**
   * More routes a test file adds, asked first and in order: each answers a call (`{status, json}`) or passes it on
   * (undefined). An answer of status 200 is remembered by Idempotency-Key like the built-in ones.
   */
  readonly routes: Array<(call: StandInCall, nextId: () => number) => { status: number; json: unknown } | undefined> =
    [];
  failRefunds: string | null = null;
  failSessions: string | null = null;
  /** Awaited before a Checkout Session is answered: lets a test look at the service while it waits for Stripe. */
  beforeSession: ((call: StandInCall) => Promise<void>) | null = null;
  private readonly server = http.createServer((req, res) => this.answer(req, res));
  private readonly byKey = new Map<string, unknown>();
  private seq = 0;

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** Calls to one path, e.g. '/v1/refunds'. */
  callsTo(path: string): StandInCall[] {
    return this.calls.filter((c) => c.path === path);
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', async () => {
      const form = Object.fromEntries(new URLSearchParams(body));
      const idempotencyKey = (req.headers['idempotency-key'] as string | undefined) ?? null;
      const call = {
        method: req.method ?? '',
        path: (req.url ?? '').split('?')[0],
        form,
        idempotencyKey,
        authorization: req.headers.authorization ?? null,
      };
      this.calls.push(call);
      const send = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_standin_${++this.seq}` });
        res.end(JSON.stringify(json));
      };
      const remembered = idempotencyKey ? this.byKey.get(`${call.path}:${idempotencyKey}`) : undefined;
      if (remembered) return send(200, remembered);
      // A test file's own routes first; a 200 answer is remembered by Idempotency-Key like the built-in ones.
      const added = this.routes.map((route) => route(call, () => ++this.seq)).find((a) => a !== undefined);
      if (added) {
        if (added.status === 200 && idempotencyKey) this.byKey.set(`${call.path}:${idempotencyKey}`, added.json);
        return send(added.status, added.json);
      }
      let object: unknown;
      if (call.method === 'POST' && call.path === '/v1/checkout/sessions') {
        if (this.beforeSession) await this.beforeSession(call);
        const again = idempotencyKey ? this.byKey.get(`${call.path}:${idempotencyKey}`) : undefined;
        if (again) return send(200, again);
        if (this.failSessions)
          return send(400, { error: { type: 'invalid_request_error', message: this.failSessions } });
        const id = `cs_test_standin${++this.seq}`;
        let total = 0;
        for (let i = 0; form[`line_items[${i}][price_data][unit_amount]`]; i++)
          total += Number(form[`line_items[${i}][price_data][unit_amount]`]);
        object = {
          id,
          object: 'checkout.session',
          mode: 'payment',
          status: 'open',
          payment_status: 'unpaid',
          amount_total: total,
          currency: 'usd',
          url: `https://checkout.stripe.com/c/pay/${id}`,
          metadata: { checkout_id: form['metadata[checkout_id]'] },
          customer_email: form.customer_email,
        };
      } else if (call.method === 'POST' && call.path === '/v1/refunds') {
        if (this.failRefunds) return send(400, { error: { type: 'invalid_request_error', message: this.failRefunds } });
        object = {
          id: `re_standin${++this.seq}`,
          object: 'refund',
          amount: Number(form.amount),
          payment_intent: form.payment_intent,
          status: 'succeeded',
        };
      } else {
        return send(404, {
          error: { type: 'invalid_request_error', message: `Unrecognized request URL (${call.method}: ${call.path})` },
        });
      }
      if (idempotencyKey) this.byKey.set(`${call.path}:${idempotencyKey}`, object);
      send(200, object);
    });
  }
}

/** A signed Stripe webhook request body and header, as Stripe sends them (signed with the package's test helper). */
function signedEvent(
  secret: string,
  event: { id: string; type: string; object: Record<string, unknown>; livemode?: boolean },
  timestamp?: number,
) {
  const payload = JSON.stringify({
    id: event.id,
    object: 'event',
    type: event.type,
    livemode: event.livemode ?? false,
    api_version: '2025-01-01',
    created: Math.floor(Date.now() / 1000),
    data: { object: event.object },
  });
  const header = new Stripe('sk_test_signer').webhooks.generateTestHeaderString({
    payload,
    secret,
    ...(timestamp ? { timestamp } : {}),
  });
  return { payload, header };
}

/** POSTs one event to the app's /stripe/webhook as Stripe sends it: the body signed with `secret`. */
export function postSignedEvent(
  app: FastifyInstance,
  secret: string,
  event: { id: string; type: string; object: Record<string, unknown>; livemode?: boolean },
  timestamp?: number,
) {
  const { payload, header } = signedEvent(secret, event, timestamp);
  return app.inject({
    method: 'POST',
    url: '/stripe/webhook',
    headers: { 'content-type': 'application/json', 'stripe-signature': header },
    payload,
  });
}
