import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import {
  constructEvent,
  FilingCompliance,
  newSigningSecret,
  signatureHeader,
  SignatureVerificationError,
} from '../sdk/src/index.js';
import { signatureHeader as serviceSignatureHeader } from '../src/modules/webhooks/signature.js';

/*
 * webhooks.constructEvent against headers made by the service's own signer (src/modules/webhooks/signature.ts):
 * several v1 entries, stale timestamps, tampering, malformed headers.
 */

const secret = 'whsec_current_0123456789abcdefghijklmnopqrstuv';
const previous = 'whsec_previous_0123456789abcdefghijklmnopqrstu';
const body = JSON.stringify({
  id: 'evt_01hx',
  type: 'filing.status_changed',
  createdAt: '2025-03-14T10:00:00.000Z',
  data: { orderId: 'order_1', filingStatus: 'filed' },
});
const now = () => Math.floor(Date.now() / 1000);

describe('webhooks.constructEvent', () => {
  it('returns the typed event for a body signed by the service', () => {
    const event = FilingCompliance.webhooks.constructEvent(body, serviceSignatureHeader(body, [secret], now()), secret);
    expect(event).toEqual(JSON.parse(body));
    if (event.type === 'filing.status_changed') expect(event.data.filingStatus).toBe('filed');
    expect(constructEvent(Buffer.from(body), serviceSignatureHeader(body, [secret], now()), secret).id).toBe(
      'evt_01hx',
    );
  });

  it('types every event the API sends, compliance reminders included', () => {
    const reminder = JSON.stringify({
      id: 'evt_01hy',
      type: 'compliance.deadline_missed',
      createdAt: '2026-03-02T09:00:00.000Z',
      data: {
        companyId: 'comp_1',
        jurisdiction: 'DE',
        kind: 'annual_report',
        dueDate: '2026-03-01',
        daysUntilDue: -1,
        reportName: 'Annual Franchise Tax Report',
        orderable: true,
      },
    });
    const event = constructEvent(reminder, serviceSignatureHeader(reminder, [secret], now()), secret);
    // Narrowing on `type` reaches the payload's own fields (a compile error if the type lacked this member).
    expect(event.type === 'compliance.deadline_missed' ? event.data.daysUntilDue : null).toBe(-1);
  });

  it('accepts any matching v1 entry: during a rotation both the new and the previous secret verify', () => {
    const header = serviceSignatureHeader(body, [secret, previous], now());
    expect(header.split(',').filter((p) => p.startsWith('v1='))).toHaveLength(2);
    expect(constructEvent(body, header, secret).id).toBe('evt_01hx');
    expect(constructEvent(body, header, previous).id).toBe('evt_01hx');
    expect(() => constructEvent(body, header, newSigningSecret())).toThrow(SignatureVerificationError);
  });

  it('rejects a timestamp older than the tolerance (300 s by default), unless the tolerance is 0', () => {
    const stale = serviceSignatureHeader(body, [secret], now() - 301);
    expect(() => constructEvent(body, stale, secret)).toThrow(/301 seconds old/);
    expect(constructEvent(body, serviceSignatureHeader(body, [secret], now() - 290), secret).id).toBe('evt_01hx');
    expect(() => constructEvent(body, serviceSignatureHeader(body, [secret], now() - 61), secret, 60)).toThrow(
      SignatureVerificationError,
    );
    expect(constructEvent(body, stale, secret, 0).id).toBe('evt_01hx');
  });

  it('rejects a changed body, a wrong secret, a replaced timestamp, and missing or malformed headers', () => {
    const t = now();
    const header = serviceSignatureHeader(body, [secret], t);
    expect(() => constructEvent(body.replace('filed', 'cancelled'), header, secret)).toThrow(/No signature matches/);
    expect(() => constructEvent(body, header, previous)).toThrow(/No signature matches/);
    expect(() => constructEvent(body, header.replace(`t=${t}`, `t=${t + 1}`), secret)).toThrow(/No signature matches/);
    expect(() => constructEvent(body, undefined, secret)).toThrow(/No Service-Signature header/);
    expect(() => constructEvent(body, 'v1=abc', secret)).toThrow(/Malformed/);
    expect(() => constructEvent(body, `t=${t}`, secret)).toThrow(/Malformed/);
    // A v1 of another length or not hex is skipped (never compared), not a crash.
    expect(() => constructEvent(body, `t=${t},v1=00,v1=${'z'.repeat(64)}`, secret)).toThrow(/Malformed/);
  });

  it("signs exactly as the service does, so Stripe's verifier accepts the SDK's test headers too", () => {
    const t = now();
    expect(signatureHeader(body, [secret, previous], t)).toBe(serviceSignatureHeader(body, [secret, previous], t));
    const stripe = new Stripe('sk_test_x');
    expect(stripe.webhooks.constructEvent(body, signatureHeader(body, secret), secret)).toMatchObject({
      id: 'evt_01hx',
    });
    expect(newSigningSecret()).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
  });
});
