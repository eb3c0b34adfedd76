import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { decideDelivery, withJitter } from '../src/modules/webhooks/delivery-policy.js';
import { signatureHeader } from '../src/modules/webhooks/signature.js';
import { isPublicAddress } from '../src/modules/webhooks/url-guard.js';
import Stripe from 'stripe';

const facts = {
  statusCode: 500,
  error: null,
  attemptNumber: 1,
  autoRetry: true,
  scheduleSeconds: [5, 300, 1800],
  endpointDisabledReason: null,
};

describe('retry policy', () => {
  it('retries after the schedule entry of the failed attempt, within ±10 %', () => {
    for (const [attemptNumber, base] of [
      [1, 5],
      [2, 300],
      [3, 1800],
    ] as const) {
      const low = decideDelivery({ ...facts, attemptNumber }, () => 0);
      const high = decideDelivery({ ...facts, attemptNumber }, () => 0.999999);
      expect(low).toMatchObject({ status: 'pending', failureReason: null });
      expect(low.retryInSeconds).toBeCloseTo(base * 0.9);
      expect(high.retryInSeconds).toBeCloseTo(base * 1.1, 3);
    }
  });

  it('fails once the schedule is exhausted, naming the last result', () => {
    expect(decideDelivery({ ...facts, attemptNumber: 4, statusCode: 502 })).toEqual({
      status: 'failed',
      retryInSeconds: null,
      failureReason: 'Gave up after 4 attempts; last result: HTTP 502',
    });
    expect(
      decideDelivery({ ...facts, attemptNumber: 4, statusCode: null, error: 'ECONNREFUSED: refused' }).failureReason,
    ).toContain('ECONNREFUSED');
  });

  it('counts only 2xx as success; redirects and 4xx are failures', () => {
    expect(decideDelivery({ ...facts, statusCode: 200 }).status).toBe('succeeded');
    expect(decideDelivery({ ...facts, statusCode: 299 }).status).toBe('succeeded');
    for (const statusCode of [301, 302, 400, 404, 429])
      expect(decideDelivery({ ...facts, statusCode }).status).toBe('pending');
  });

  it('makes one attempt only for test pings and resends', () => {
    expect(decideDelivery({ ...facts, autoRetry: false })).toMatchObject({
      status: 'failed',
      failureReason: expect.stringContaining('single attempt'),
    });
  });

  it('stops when the endpoint was just disabled', () => {
    expect(
      decideDelivery({ ...facts, statusCode: 410, endpointDisabledReason: 'The endpoint answered 410 Gone' }),
    ).toMatchObject({ status: 'failed', failureReason: 'Endpoint disabled: The endpoint answered 410 Gone' });
  });

  it('never produces a negative wait', () => {
    expect(withJitter(0, () => 0)).toBe(0);
  });
});

describe('public address check', () => {
  it('accepts public unicast IPv4 and IPv6 only', () => {
    for (const ip of ['8.8.8.8', '93.184.215.14', '2001:4860:4860::8888', '::ffff:8.8.8.8'])
      expect(isPublicAddress(ip), ip).toBe(true);
    const refused = [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '64:ff9b::a00:1',
      '2002:a00:1::',
      'not-an-ip',
    ];
    for (const ip of refused) expect(isPublicAddress(ip), ip).toBe(false);
  });
});

describe('signature header', () => {
  it('is what Stripe verifies, one v1 per secret', () => {
    const body = JSON.stringify({
      id: 'evt_1',
      type: 'document.uploaded',
      createdAt: '2025-01-01T00:00:00.000Z',
      data: { a: 'é' },
    });
    const t = Math.floor(Date.now() / 1000);
    const header = signatureHeader(body, ['whsec_new', 'whsec_old'], t);
    expect(header).toMatch(new RegExp(`^t=${t},v1=[0-9a-f]{64},v1=[0-9a-f]{64}$`));
    const stripe = new Stripe('sk_test_x');
    for (const secret of ['whsec_new', 'whsec_old'])
      expect(stripe.webhooks.constructEvent(body, header, secret)).toMatchObject({ id: 'evt_1' });
    expect(() => stripe.webhooks.constructEvent(body, header, 'whsec_other')).toThrow();
  });
});

describe('webhook settings', () => {
  it('reads WEBHOOK_RETRY_SCHEDULE and WEBHOOK_DISABLE_AFTER_HOURS with fractions and spaces', () => {
    const config = loadConfig({
      WEBHOOK_RETRY_SCHEDULE: '0.5, 2,10',
      WEBHOOK_DISABLE_AFTER_HOURS: '0.25',
      WEBHOOK_TIMEOUT_MS: '250',
    });
    expect(config.webhookRetryScheduleSeconds).toEqual([0.5, 2, 10]);
    expect(config.webhookDisableAfterHours).toBe(0.25);
    expect(config.webhookTimeoutMs).toBe(250);
    expect(loadConfig({}).webhookRetryScheduleSeconds).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '5,,300' })).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
  });
});
