import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';

/*
 * API-7: routes that take no body accept the empty body many HTTP clients send with `Content-Type: application/json`
 * on every POST and DELETE; routes that take one still refuse an empty one, and JSON is still parsed safely.
 */

let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.newTenant('Bodies Co');
});
afterAll(() => t.close());

const json = { 'content-type': 'application/json' };

async function createEndpoint(): Promise<string> {
  const res = await tenant.api('POST', '/webhook-endpoints', {
    url: 'http://127.0.0.1:9/hooks',
    eventTypes: ['filing.status_changed'],
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

describe('an empty body sent as application/json', () => {
  it('is accepted by the actions that take no body', async () => {
    const endpointId = await createEndpoint();
    const rotated = await tenant.api('POST', `/webhook-endpoints/${endpointId}/rotate-secret`, '', { headers: json });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.json().secret).toMatch(/^whsec_/);

    const ping = await tenant.api('POST', `/webhook-endpoints/${endpointId}/test`, '', { headers: json });
    expect(ping.statusCode, ping.body).toBe(202);

    // These routes ran and answered their own 404 (no such delivery; no custom price was set), not a 400 about the body.
    const resent = await tenant.api('POST', '/webhook-deliveries/wd_01hzzzzzzzzzzzzzzzzzzzzzzz/resend', '', {
      headers: json,
    });
    expect(resent.statusCode, resent.body).toBe(404);
    expect(resent.json().code).toBe('not_found');
    const reverted = await tenant.api('DELETE', '/organization/prices/ein', '', { headers: json });
    expect(reverted.statusCode, reverted.body).toBe(404);
    expect(reverted.json().code).toBe('not_found');

    const deleted = await tenant.api('DELETE', `/webhook-endpoints/${endpointId}`, '', { headers: json });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect((await tenant.api('GET', `/webhook-endpoints/${endpointId}`)).statusCode).toBe(404);
  });

  it('is refused by a route that takes a body, naming what is wrong', async () => {
    for (const [method, path] of [
      ['POST', '/webhook-endpoints'],
      ['POST', '/users'],
      ['POST', '/orders'],
    ] as const) {
      const res = await tenant.api(method, path, '', { headers: json });
      expect(res.statusCode, `${method} ${path}`).toBe(400);
      expect(res.json()).toMatchObject({ code: 'bad_request', message: 'The JSON body is empty; send an object' });
    }
  });
});

describe('JSON bodies', () => {
  it('are still refused when they carry a __proto__ key, and when they are not JSON', async () => {
    const poisoned = await tenant.api(
      'POST',
      '/users',
      '{"__proto__":{"isAdmin":true},"fullName":"P","email":"p@example.com"}',
      {
        headers: json,
      },
    );
    expect(poisoned.statusCode, poisoned.body).toBe(400);
    const broken = await tenant.api('POST', '/users', '{"fullName":', { headers: json });
    expect(broken.statusCode, broken.body).toBe(400);
  });
});
