import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FilingCompliance, RedirectError } from '../sdk/src/index.js';

/*
 * The SDK follows no redirect, so the API key never reaches another address: an API address that answers with a
 * redirect (a proxy's http-to-https upgrade, a moved or hijacked host) gets a RedirectError naming where it pointed,
 * and nothing is sent there. Two local servers on different ports are two origins.
 */

const KEY = 'sk_test_0123456789abcdefghijklmnopqrstuvwxyz012345';

interface Server {
  origin: string;
  /** Every request received: method, path and headers. */
  requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders }>;
  close(): Promise<void>;
}

/** A server that records each request and answers it with `answer(path)`. */
async function server(answer: (path: string) => { status: number; headers?: Record<string, string> }): Promise<Server> {
  const requests: Server['requests'] = [];
  const srv = http.createServer((req, res) => {
    requests.push({ method: req.method!, url: req.url!, headers: req.headers });
    req.resume();
    const { status, headers } = answer(req.url!);
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end('{"data":[],"hasMore":false}');
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        srv.closeAllConnections();
        srv.close(() => resolve());
      }),
  };
}

let elsewhere: Server;
let redirecting: Server;
/** The status `redirecting` answers with. */
let redirectStatus = 307;
beforeAll(async () => {
  elsewhere = await server(() => ({ status: 200, headers: { 'content-type': 'text/event-stream' } }));
  // Every path is sent on to the same path of the other origin.
  redirecting = await server((path) => ({
    status: redirectStatus,
    headers: { location: `${elsewhere.origin}${path}` },
  }));
});
afterAll(async () => {
  await elsewhere?.close();
  await redirecting?.close();
});

const client = (origin: string) =>
  new FilingCompliance({ apiKey: KEY, baseUrls: { test: `${origin}/test/v1`, live: `${origin}/v1` } });

describe('redirects', () => {
  it('refuses a redirect to another origin with RedirectError, sending nothing there: GET, POST, the raw client and the stream', async () => {
    const fc = client(redirecting.origin);
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['GET', () => fc.listUsers({ limit: 1 })],
      ['POST', () => fc.createUser({ fullName: 'Ada Lovelace', email: 'ada@example.com' })],
      ['raw GET', () => fc.http.GET('/users')],
      ['stream', () => fc.streamEvents({ reconnectDelayMs: 10 }).next()],
    ];
    for (const [what, call] of calls) {
      const error = await call().then(
        () => null,
        (err: unknown) => err,
      );
      expect(error, what).toBeInstanceOf(RedirectError);
      expect((error as RedirectError).status).toBe(307);
      expect((error as RedirectError).location).toMatch(new RegExp(`^${elsewhere.origin}/test/v1/`));
      expect((error as Error).message).toContain('follows no redirect');
      expect((error as Error).message).not.toContain(KEY);
    }
    // Each call was asked once (none retried, the stream included), and the other origin never heard of the key.
    expect(redirecting.requests.map((r) => r.method)).toEqual(['GET', 'POST', 'GET', 'GET']);
    expect(redirecting.requests.every((r) => r.headers['x-api-key'] === KEY)).toBe(true);
    expect(elsewhere.requests).toEqual([]);
  });

  it('refuses every redirect status, a redirect on the same origin included', async () => {
    const before = elsewhere.requests.length;
    for (const status of [301, 302, 303, 308]) {
      redirectStatus = status;
      await expect(client(redirecting.origin).listUsers(), String(status)).rejects.toMatchObject({
        name: 'RedirectError',
        status,
      });
    }
    const sameOrigin = await server((path) => ({ status: 308, headers: { location: `/moved${path}` } }));
    try {
      await expect(client(sameOrigin.origin).listUsers()).rejects.toMatchObject({
        name: 'RedirectError',
        location: `${sameOrigin.origin}/moved/test/v1/users`,
      });
      expect(sameOrigin.requests).toHaveLength(1);
    } finally {
      await sameOrigin.close();
    }
    expect(elsewhere.requests).toHaveLength(before);
  });
});
