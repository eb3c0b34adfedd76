import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { newId } from '../src/lib/ids.js';
import { insertOperator } from '../src/modules/console/operators.repo.js';
import { DUMMY_HASH } from '../src/modules/console/password.js';
import { createSession, findSession, sessionCookieValue } from '../src/modules/console/sessions.js';
import { createOrderRow, tenantOf } from './factories.js';
import { createTestApp, type TestApp } from './harness.js';

// HTTP_REQUEST_TIMEOUT_MS, HTTP_HEADERS_TIMEOUT_MS, HTTP_BODY_IDLE_TIMEOUT_MS and HTTP_KEEP_ALIVE_TIMEOUT_MS bound what
// a slow or idle client can hold on the real listening socket (inject() never sees these), each to about a second past
// its setting.
const REQUEST_MS = 5000;
const HEADERS_MS = 1000;
const BODY_IDLE_MS = 800;
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
    httpBodyIdleTimeoutMs: BODY_IDLE_MS,
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

/**
 * Opens a connection, writes `text`, calls `opened` with the socket once written (to write more later), and resolves
 * with what the server sent and how long until it closed.
 */
function exchange(
  text: string,
  then?: (socket: net.Socket) => void,
  opened?: (socket: net.Socket) => void,
): Promise<{ answer: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const started = Date.now();
    let answer = '';
    socket.on('data', (chunk) => {
      answer += String(chunk);
      then?.(socket);
    });
    socket.on('error', reject);
    socket.on('close', () => resolve({ answer, closedAfterMs: Date.now() - started }));
    socket.setTimeout(30_000, () => socket.destroy(new Error('the server never closed the connection')));
    socket.write(text);
    opened?.(socket);
  });
}

describe('HTTP timeouts on the listening socket', () => {
  it('answers 408 and closes when the headers do not arrive within HTTP_HEADERS_TIMEOUT_MS', async () => {
    const { answer, closedAfterMs } = await exchange('GET /healthz HTTP/1.1\r\nHost: localhost\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfterMs).toBeGreaterThanOrEqual(HEADERS_MS - 100);
    expect(closedAfterMs).toBeLessThan(REQUEST_MS);
  });

  it('answers 408 and closes when the body, though it keeps trickling in, does not arrive within HTTP_REQUEST_TIMEOUT_MS', async () => {
    const tenant = await t.newTenant();
    const body = '{"fullName":"Ada"';
    const head = `POST /test/v1/users HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${tenant.keys.test}\r\nContent-Type: application/json\r\nContent-Length: ${body.length + 50}\r\n\r\n`;
    // A space every 400 ms: never silent for HTTP_BODY_IDLE_TIMEOUT_MS, never done either.
    let trickle: NodeJS.Timeout | undefined;
    const { answer, closedAfterMs } = await exchange(
      head + body,
      () => clearInterval(trickle),
      (socket) => {
        trickle = setInterval(() => socket.write(' '), 400);
      },
    );
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfterMs).toBeGreaterThanOrEqual(REQUEST_MS - 100);
    expect(closedAfterMs).toBeLessThan(REQUEST_MS + 2500);
  });

  it('answers 408 and closes when the body stops arriving for HTTP_BODY_IDLE_TIMEOUT_MS (OPS-7)', async () => {
    const tenant = await t.newTenant();
    const body = '{"fullName":"Ada"';
    const head = `POST /test/v1/users HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${tenant.keys.test}\r\nContent-Type: application/json\r\nContent-Length: ${body.length + 50}\r\n\r\n`;
    const { answer, closedAfterMs } = await exchange(head + body);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toMatch(/connection: close/i);
    expect(closedAfterMs).toBeGreaterThanOrEqual(BODY_IDLE_MS - 100);
    expect(closedAfterMs).toBeLessThan(REQUEST_MS - 1000);
    // Nothing was created from the part that came.
    const users = await tenant.api('GET', '/users');
    expect(users.json().data).toEqual([]);
  });

  it('answers 408 to a console upload whose multipart body stops, and to a chunked body without its last chunk', async () => {
    // Signed in without a password check: no scrypt for a test about the socket.
    const operator = await insertOperator(t.ctx.pool, {
      id: newId('operator'),
      email: 'stalled.upload@example.com',
      name: 'Stalled Upload',
      passwordHash: DUMMY_HASH,
    });
    const { sessionId } = await createSession(t.ctx.pool, operator!.id);
    const cookie = `fcs_console=${sessionCookieValue(t.ctx.secrets.fileUrlSecret, sessionId)}`;
    const csrf = (await findSession(t.ctx.pool, sessionId))!.csrfToken;
    const tenant = await t.newTenant();
    // A real order and the token first: the file is being stored when the body stops (DOC-10).
    const { orderId } = await createOrderRow(t.ctx, tenantOf(tenant));
    const part = `------stall\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${csrf}\r\n------stall\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.4\n`;
    const upload = await exchange(
      `POST /console/orders/${orderId}/documents HTTP/1.1\r\nHost: localhost\r\nCookie: ${cookie}\r\nContent-Type: multipart/form-data; boundary=----stall\r\nContent-Length: ${part.length + 5000}\r\n\r\n${part}`,
    );
    expect(upload.answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(upload.closedAfterMs).toBeLessThan(REQUEST_MS - 1000);
    const chunked = await exchange(
      `POST /test/v1/users HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${tenant.keys.test}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"ful\r\n`,
    );
    expect(chunked.answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(chunked.closedAfterMs).toBeLessThan(REQUEST_MS - 1000);
  });

  it('reads a body that arrives slowly but steadily, never silent for HTTP_BODY_IDLE_TIMEOUT_MS', async () => {
    const tenant = await t.newTenant();
    const body = JSON.stringify({ fullName: 'Slow Sender', email: 'slow.sender@example.com' });
    const head = `POST /test/v1/users HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${tenant.keys.test}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
    // Four parts 500 ms apart: two seconds in all, more than twice the idle timeout.
    const parts = [0, 1, 2, 3].map((i) => body.slice((i * body.length) / 4, ((i + 1) * body.length) / 4));
    let sent = 0;
    let pacer: NodeJS.Timeout | undefined;
    const { answer } = await exchange(
      head,
      () => clearInterval(pacer),
      (socket) => {
        pacer = setInterval(() => {
          if (sent < parts.length) socket.write(parts[sent++]!);
        }, 500);
      },
    );
    expect(answer).toMatch(/^HTTP\/1\.1 201 /);
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
