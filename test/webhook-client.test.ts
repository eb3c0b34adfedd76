import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sendWebhook } from '../src/modules/webhooks/webhook-client.js';

/*
 * WH-4: an attempt's whole exchange, the response body included, must end within the timeout. A receiver that
 * answers its headers at once and then sends its body a byte at a time is cut like one that never answers.
 */

let server: http.Server;
let port: number;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    if (req.url === '/dribble') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('.'), 50);
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (req.url === '/silent') return; // never answers
    if (req.url === '/headers') {
      res.writeHead(503, { 'retry-after': '30', 'x-big': 'y'.repeat(3000) }).end('busy');
      return;
    }
    res.writeHead(200).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const attempt = (path: string, timeoutMs: number) =>
  sendWebhook({
    url: `http://127.0.0.1:${port}${path}`,
    body: '{}',
    headers: { 'content-type': 'application/json' },
    timeoutMs,
    pinned: null,
    keepBodyFrom: () => true,
  });

it('cuts an answer whose body is still arriving when the timeout is up', async () => {
  const started = performance.now();
  const res = await attempt('/dribble', 400);
  const took = performance.now() - started;
  expect(res).toMatchObject({ statusCode: null, error: 'Timed out after 400 ms without a complete response' });
  expect(took).toBeGreaterThanOrEqual(390);
  // Uncut, the attempt would never end (the body never does): any bound far above the timeout tells the two apart,
  // and this one holds however loaded the machine is.
  expect(took).toBeLessThan(15_000);
});

it('cuts a receiver that never answers, and keeps a quick answer whole', async () => {
  // The quick answer gets a timeout no loaded machine reaches, so only a wrong cut can fail it.
  const [silent, quick] = await Promise.all([attempt('/silent', 300), attempt('/quick', 15_000)]);
  expect(silent).toMatchObject({ statusCode: null, error: expect.stringContaining('Timed out after 300 ms') });
  expect(quick).toMatchObject({ statusCode: 200, responseBody: 'ok', error: null });
});

it('keeps the response headers with the body, at most 2 KiB of them, and none where the body is not kept', async () => {
  const kept = await attempt('/headers', 15_000);
  expect(kept).toMatchObject({ statusCode: 503, responseBody: 'busy' });
  expect(kept.responseHeaders?.['retry-after']).toBe('30');
  // The oversized header is left out; the ones after it are kept.
  expect(kept.responseHeaders?.['x-big']).toBeUndefined();
  expect(kept.responseHeaders?.date).toBeDefined();
  const notKept = await sendWebhook({
    url: `http://127.0.0.1:${port}/headers`,
    body: '{}',
    headers: {},
    timeoutMs: 15_000,
    pinned: null,
    keepBodyFrom: () => false,
  });
  expect(notKept).toMatchObject({ statusCode: 503, responseBody: '' });
  expect(notKept.responseHeaders).toBeUndefined();
});
