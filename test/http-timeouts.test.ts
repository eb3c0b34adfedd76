import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createTestApp, type TestApp } from './harness.js';

// HTTP_REQUEST_TIMEOUT_MS, HTTP_HEADERS_TIMEOUT_MS and HTTP_KEEP_ALIVE_TIMEOUT_MS bound what a slow or idle client can
// hold on the real listening socket (inject() never sees these), each to about a second past its setting.
const REQUEST_MS = 2500;
const HEADERS_MS = 1000;
const KEEP_ALIVE_MS = 700;

let t: TestApp;
let app: FastifyInstance;
let port: number;
beforeAll(async () => {
  t = await createTestApp();
  const config = {
    ...t.ctx.config,
    httpRequestTimeoutMs: REQUEST_MS,
    httpHeadersTimeoutMs: HEADERS_MS,
    httpKeepAliveTimeoutMs: KEEP_ALIVE_MS,
  };
  app = await buildApp({ ...t.ctx, config }, { logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await app?.close();
  await t?.close();
});

/** Opens a connection, writes `text`, and resolves with what the server sent and how long until it closed. */
function exchange(
  text: string,
  then?: (socket: net.Socket) => void,
): Promise<{ answer: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const opened = Date.now();
    let answer = '';
    socket.on('data', (chunk) => {
      answer += String(chunk);
      then?.(socket);
    });
    socket.on('error', reject);
    socket.on('close', () => resolve({ answer, closedAfterMs: Date.now() - opened }));
    socket.setTimeout(30_000, () => socket.destroy(new Error('the server never closed the connection')));
    socket.write(text);
  });
}

describe('HTTP timeouts on the listening socket', () => {
  it('answers 408 and closes when the headers do not arrive within HTTP_HEADERS_TIMEOUT_MS', async () => {
    const { answer, closedAfterMs } = await exchange('GET /healthz HTTP/1.1\r\nHost: localhost\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfterMs).toBeGreaterThanOrEqual(HEADERS_MS - 100);
    expect(closedAfterMs).toBeLessThan(REQUEST_MS);
  });

  it('answers 408 and closes when the body does not arrive within HTTP_REQUEST_TIMEOUT_MS', async () => {
    const tenant = await t.newTenant();
    const body = '{"fullName":"Ada"';
    const head = `POST /test/v1/users HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${tenant.keys.test}\r\nContent-Type: application/json\r\nContent-Length: ${body.length + 50}\r\n\r\n`;
    const { answer, closedAfterMs } = await exchange(head + body);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfterMs).toBeGreaterThanOrEqual(REQUEST_MS - 100);
    expect(closedAfterMs).toBeLessThan(REQUEST_MS + 2500);
  });

  it('closes an idle keep-alive connection after HTTP_KEEP_ALIVE_TIMEOUT_MS', async () => {
    let answeredAt = 0;
    const { answer, closedAfterMs } = await exchange(
      'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n',
      () => (answeredAt ||= Date.now()),
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toMatch(/keep-alive/i);
    expect(closedAfterMs).toBeGreaterThanOrEqual(KEEP_ALIVE_MS - 100);
    expect(closedAfterMs).toBeLessThan(KEEP_ALIVE_MS + 2500);
  });
});
