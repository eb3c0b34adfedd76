import { describe, expect, it } from 'vitest';
import { runCli } from './cli-runner.js';
import { consoleClient, newOperator, signIn } from './console-helpers.js';
import {
  deliverStripeEvent,
  dispute,
  fundingSuite,
  openLiveTopUp,
  payByCard,
  refundedCharge,
} from './funding-helpers.js';
import type { TestApp } from './harness.js';

/*
 * The operators' view of funding (FUND-27): the console's Top-ups page and `balance top-ups` list every top-up with its
 * failure and what disputes and refunds took back, and every dispute, refund and won dispute, with the same filters;
 * `ledger verify` still finds every balance equal to its ledger after clawbacks below zero.
 */

const suite = fundingSuite();
const { stripe } = suite;
/** The suite's app (set by fundingSuite's beforeAll). */
const app = (): TestApp => suite.t;

describe('operators see every top-up, failure and dispute', () => {
  it('in the console and the CLI, filtered, and ledger verify still holds', async () => {
    const t = app();
    const tenant = await t.newTenant('Operator View Co');
    const other = await t.newTenant('Operator Other Co');
    const paid = await openLiveTopUp(tenant, stripe, 300);
    await payByCard(t, paid, 'pi_ops_paid');
    stripe.failSessions = 'Stripe is down';
    const failed = await tenant
      .api('POST', '/balance/top-ups', { amount: 55 }, { env: 'live' })
      .finally(() => (stripe.failSessions = null));
    expect(failed.statusCode).toBe(503);
    await deliverStripeEvent(t, 'charge.dispute.created', dispute('dp_ops_1', 'pi_ops_paid', 30000));
    await deliverStripeEvent(t, 'charge.dispute.closed', dispute('dp_ops_1', 'pi_ops_paid', 30000, 'won'));
    await deliverStripeEvent(t, 'charge.refunded', refundedCharge('pi_ops_paid', 30000, 10000, ['re_ops_1']));
    const testTopUp = (await tenant.api('POST', '/balance/top-ups', { amount: 20 })).json();
    await other.api('POST', '/balance/top-ups', { amount: 15 });

    const op = await newOperator(t.ctx.pool);
    const c = consoleClient(t.app);
    await signIn(c, op.email, op.password);
    const page = await c.get(`/console/top-ups?organizationId=${tenant.organizationId}`);
    expect(page.statusCode, page.body).toBe(200);
    const topUpRows = [...page.body.matchAll(/<tr data-top-up="(topup_[a-z0-9]+)">/g)].map((m) => m[1]);
    expect(topUpRows).toHaveLength(3);
    expect(topUpRows).toContain(paid.topUp.id);
    expect(topUpRows).toContain(testTopUp.id);
    expect(page.body).toContain('Stripe did not open the payment page');
    const reversals = [...page.body.matchAll(/<tr data-reversal="(txn_[a-z0-9]+)">/g)];
    expect(reversals).toHaveLength(3);
    for (const ref of ['dp_ops_1', 're_ops_1', 'dispute won']) expect(page.body).toContain(ref);
    expect(page.body).not.toContain('Operator Other Co</a>');

    const failedOnly = await c.get(`/console/top-ups?status=failed&environment=live&show=top-ups`);
    const failedRows = [...failedOnly.body.matchAll(/<tr data-top-up="(topup_[a-z0-9]+)">/g)];
    expect(failedRows).toHaveLength(1);
    expect(failedOnly.body).not.toContain('data-reversal=');
    const refused = await c.get('/console/top-ups?status=lost&from=yesterday');
    expect(refused.statusCode).toBe(200);
    expect(refused.body).toContain('id="err-status"');
    expect(refused.body).toContain('id="err-from"');

    const cli = await runCli(t, ['balance', 'top-ups', '--org', tenant.organizationId, '--json']);
    expect(cli.code, cli.stderr).toBe(0);
    const listed = JSON.parse(cli.stdout);
    expect(listed.topUps.map((x: { id: string }) => x.id)).toEqual(topUpRows);
    expect(listed.topUps.find((x: { id: string }) => x.id === paid.topUp.id)).toMatchObject({
      status: 'succeeded',
      disputed: 0,
      refunded: 100,
      paymentIntent: 'pi_ops_paid',
    });
    expect(listed.reversals.map((r: { kind: string; reference: string }) => [r.kind, r.reference])).toEqual([
      ['refund', 're_ops_1'],
      ['dispute_won', 'dp_ops_1'],
      ['dispute', 'dp_ops_1'],
    ]);
    const text = await runCli(t, ['balance', 'top-ups', '--status', 'failed', '--environment', 'live']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('Top-ups (1):');
    expect(text.stdout).toContain('failed  (Stripe did not open the payment page');
    const bad = await runCli(t, ['balance', 'top-ups', '--status', 'lost']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--status');

    const verify = await runCli(t, ['ledger', 'verify']);
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stdout).toContain('Every balance equals the sum of its ledger entries.');
  });
});
