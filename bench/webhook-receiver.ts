/**
 * The webhook receiver the `webhooks` bench section sends to, in its own process: it verifies every request's
 * Service-Signature (HMAC-SHA256 of "{t}.{raw body}" with the registered secrets) and records when each event
 * arrived, on the same clock as the bench process (`performance.timeOrigin + performance.now()`, ms).
 * Paths: `POST /register {key, secret}`; `POST /ok/{key}` answers 200, `/fail/{key}` 500, `/hang/{key}` never;
 * `POST /cut` closes the connection of every hanging request (`{cut: n}`); `GET /stats` → `{count: {key: n}, bad,
 * hanging}` (hanging: requests open now); `GET /arrivals/{key}` → `{eventId: ms}`. Prints `READY <base url>`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const secrets = new Map<string, string>();
const arrivals = new Map<string, Map<string, number>>();
const counts = new Map<string, number>();
const hanging = new Set<http.ServerResponse>();
let bad = 0;

const now = () => performance.timeOrigin + performance.now();

function verified(key: string, body: string, header: string | undefined): boolean {
  const secret = secrets.get(key);
  if (!secret || !header) return false;
  const parts = header.split(',');
  const t = parts.find((p) => p.startsWith('t='))?.slice(2);
  const expected = createHmac('sha256', secret).update(`${t}.${body}`, 'utf8').digest();
  return parts
    .filter((p) => p.startsWith('v1='))
    .some((p) => {
      const got = Buffer.from(p.slice(3), 'hex');
      return got.length === expected.length && timingSafeEqual(got, expected);
    });
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = now();
    const body = Buffer.concat(chunks).toString('utf8');
    const [, kind, key = ''] = (req.url ?? '').split('/');
    if (req.method === 'POST' && kind === 'register') {
      const { key: k, secret } = JSON.parse(body) as { key: string; secret: string };
      secrets.set(k, secret);
      return void res.writeHead(204).end();
    }
    if (req.method === 'GET' && kind === 'stats') {
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ count: Object.fromEntries(counts), bad, hanging: hanging.size }));
    }
    if (req.method === 'GET' && kind === 'arrivals') {
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(Object.fromEntries(arrivals.get(key) ?? [])));
    }
    if (req.method === 'POST' && kind === 'cut') {
      const cut = hanging.size;
      for (const r of hanging) r.socket?.destroy();
      hanging.clear();
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ cut }));
    }
    if (kind === 'hang') {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }
    if (!verified(key, body, req.headers['service-signature'] as string | undefined)) {
      bad += 1;
      return void res.writeHead(400).end('bad signature');
    }
    if (kind === 'fail') return void res.writeHead(500).end('failing on purpose');
    const eventId = String(req.headers['service-event-id']);
    let seen = arrivals.get(key);
    if (!seen) {
      seen = new Map();
      arrivals.set(key, seen);
    }
    if (!seen.has(eventId)) seen.set(eventId, at);
    counts.set(key, (counts.get(key) ?? 0) + 1);
    res.writeHead(200).end('ok');
  });
});
server.keepAliveTimeout = 65_000;
server.headersTimeout = 66_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`READY http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
