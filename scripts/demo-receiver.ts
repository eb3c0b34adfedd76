import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

/** The envelope the service POSTs (EVT-1). */
export interface DemoEvent {
  id: string;
  type: string;
  createdAt: string;
  data: Record<string, any>;
}

/** A local webhook receiver that verifies every request as an integrator would and prints it. */
export interface DemoReceiver {
  url: string;
  /** Set once the endpoint is registered (the secret is shown only at creation). */
  secret: string | null;
  verified: DemoEvent[];
  rejected: number;
  close(): Promise<void>;
}

const stripe = new Stripe('sk_test_demo');

/**
 * Starts the receiver on 127.0.0.1 (free port). Each request is checked with Stripe's
 * `webhooks.constructEvent(rawBody, Service-Signature header as is, whsec_ secret)`; a good one is answered
 * 200 and printed through `print`, a bad one 400.
 */
export async function startDemoReceiver(print: (line: string) => void): Promise<DemoReceiver> {
  const receiver: DemoReceiver = { url: '', secret: null, verified: [], rejected: 0, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      try {
        const event = stripe.webhooks.constructEvent(
          raw,
          String(req.headers['service-signature'] ?? ''),
          receiver.secret ?? '',
        ) as unknown as DemoEvent;
        receiver.verified.push(event);
        print(`  webhook ✔ signature verified  ${describeEvent(event)}`);
        res.writeHead(200).end('ok');
      } catch (err) {
        receiver.rejected += 1;
        print(`  webhook ✘ REJECTED: ${(err as Error).message}`);
        res.writeHead(400).end('bad signature');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

/** One line per event: id, type and the fields a reader cares about. */
export function describeEvent(e: DemoEvent): string {
  const d = e.data;
  if (e.type === 'filing.status_changed') {
    const extra =
      d.filingStatus === 'exception'
        ? ` ${d.exceptionCode} (${d.exceptionReason})${d.exceptionMessage ? `: ${d.exceptionMessage}` : ''}`
        : d.filingStatus === 'filed'
          ? ` on ${d.filingDate}`
          : '';
    return `${e.id}  ${e.type}  ${d.orderType} -> ${d.filingStatus}${extra}`;
  }
  if (e.type === 'document.uploaded') return `${e.id}  ${e.type}  ${d.documentType} ${d.fileName} (${d.fileType})`;
  return `${e.id}  ${e.type}`;
}
