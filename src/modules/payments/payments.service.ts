import type { Config } from '../../config-types.js';
import type { Environment, Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { newId } from '../../lib/ids.js';
import * as repo from './payments.repo.js';
import type { PaymentProvider } from './payment-provider.js';
import { SandboxPaymentProvider } from './sandbox-provider.js';
import { StripePaymentProvider } from './stripe-provider.js';

const sandbox = new SandboxPaymentProvider();
const stripeByConfig = new WeakMap<Config, StripePaymentProvider>();

/**
 * The provider that charges cards for a tenant's environment (PAY-1): the sandbox in test, whatever is configured
 * (a test key never reaches Stripe, so it never changes what live customers see or pay); Stripe in live when
 * STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET are set. null: live without Stripe, where the dashboard says card
 * payment is unavailable instead of taking an order it cannot charge.
 */
export function paymentProviderFor(config: Config, environment: Environment): PaymentProvider | null {
  if (environment === 'test') return sandbox;
  return stripeProvider(config);
}

/** The configured Stripe provider (one client per configuration), or null when Stripe is not configured. */
export function stripeProvider(config: Config): StripePaymentProvider | null {
  if (!config.stripe) return null;
  let provider = stripeByConfig.get(config);
  if (!provider) {
    provider = new StripePaymentProvider(config.stripe);
    stripeByConfig.set(config, provider);
  }
  return provider;
}

/**
 * One line for the start-up log on live card payments (PAY-1): whether they are on and, when off, why.
 * `level` warn for a state an operator most likely wants to change.
 */
export function livePaymentsStatus(config: Config): { level: 'info' | 'warn'; message: string } {
  if (!config.stripe) {
    return {
      level: 'warn',
      message:
        'live card payments are off: STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET are not set, so live customer-billed dashboard checkout says card payment is unavailable (docs/deploying.md, "Going live with Stripe")',
    };
  }
  if (config.stripe.secretKey.includes('_test_')) {
    return {
      level: 'warn',
      message: `live card payments go to Stripe in TEST mode (STRIPE_SECRET_KEY is a test key): live customers' cards are not charged (API ${config.stripe.apiBaseUrl})`,
    };
  }
  return { level: 'info', message: `live card payments through Stripe (API ${config.stripe.apiBaseUrl})` };
}

/** Records one checkout payment attempt (call inside the order's transaction for a success). @returns the pay_ id. */
export function recordPayment(db: Db, tenant: Tenant, p: repo.PaymentRecord): Promise<string> {
  return repo.insertPayment(db, tenant, newId('payment'), p);
}
