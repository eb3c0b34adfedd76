import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({
    WEBHOOK_ENDPOINTS_MAX: '3',
    RATE_LIMIT_WEBHOOK_TESTS: '2',
    RATE_LIMIT_WEBHOOK_RESENDS: '2',
  });
});
afterAll(() => t?.close());

const endpoint = { url: 'http://127.0.0.1:9/hooks', eventTypes: ['document.uploaded'] };

describe('caps on webhook endpoints per tenant', () => {
  it('refuses an endpoint beyond WEBHOOK_ENDPOINTS_MAX with 409 webhook_endpoint_limit_reached; deleting one makes room; environments count apart', async () => {
    const tenant = await t.newTenant();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await tenant.api('POST', '/webhook-endpoints', endpoint);
      expect(res.statusCode, res.body).toBe(201);
      ids.push(res.json().id);
    }
    const over = await tenant.api('POST', '/webhook-endpoints', endpoint);
    expect(over.statusCode).toBe(409);
    expect(over.json()).toMatchObject({
      code: 'webhook_endpoint_limit_reached',
      message: expect.stringMatching(/the most allowed is 3.*DELETE \/webhook-endpoints/),
    });
    expect((await tenant.api('POST', '/webhook-endpoints', endpoint, { env: 'live' })).statusCode).toBe(201);
    expect((await tenant.api('DELETE', `/webhook-endpoints/${ids[0]}`)).statusCode).toBe(200);
    expect((await tenant.api('POST', '/webhook-endpoints', endpoint)).statusCode).toBe(201);
  });

  it('holds under concurrent creates', async () => {
    const tenant = await t.newTenant();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => tenant.api('POST', '/webhook-endpoints', endpoint)),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 201, 201, 409, 409, 409]);
  });
});

describe('test sends and resends per minute', () => {
  it('answers 429 with Retry-After beyond RATE_LIMIT_WEBHOOK_TESTS test sends a minute, per tenant', async () => {
    const [tenant, other] = await Promise.all([t.newTenant(), t.newTenant()]);
    const id = (await tenant.api('POST', '/webhook-endpoints', endpoint)).json().id;
    for (let i = 0; i < 2; i++) {
      const res = await tenant.api('POST', `/webhook-endpoints/${id}/test`);
      expect(res.statusCode, res.body).toBe(202);
      expect(res.headers['ratelimit-limit']).toBe('2');
    }
    const over = await tenant.api('POST', `/webhook-endpoints/${id}/test`);
    expect(over.statusCode).toBe(429);
    expect(over.json()).toMatchObject({ code: 'rate_limited', message: expect.stringContaining('test events') });
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(over.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(over.headers['ratelimit-remaining']).toBe('0');
    const otherId = (await other.api('POST', '/webhook-endpoints', endpoint)).json().id;
    expect((await other.api('POST', `/webhook-endpoints/${otherId}/test`)).statusCode).toBe(202);
  });

  it('answers 429 with Retry-After beyond RATE_LIMIT_WEBHOOK_RESENDS resends a minute, counting every resend request', async () => {
    const tenant = await t.newTenant();
    for (let i = 0; i < 2; i++)
      expect((await tenant.api('POST', '/webhook-deliveries/wd_01j8zq4v9r6w3t2y1x0a5b7c8m/resend')).statusCode).toBe(
        404,
      );
    const over = await tenant.api('POST', '/webhook-deliveries/wd_01j8zq4v9r6w3t2y1x0a5b7c8m/resend');
    expect(over.statusCode).toBe(429);
    expect(over.json().message).toContain('resends');
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // The live environment of the same organization has its own count.
    expect(
      (await tenant.api('POST', '/webhook-deliveries/wd_01j8zq4v9r6w3t2y1x0a5b7c8m/resend', undefined, { env: 'live' }))
        .statusCode,
    ).toBe(404);
  });
});
