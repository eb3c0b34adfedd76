import type { Environment, Tenant } from '../../context.js';
import { one, type Db } from '../../lib/db.js';
import { newId } from '../../lib/ids.js';
import type { PaymentProvider } from './payment-provider.js';
import { SandboxPaymentProvider } from './sandbox-provider.js';

const sandbox = new SandboxPaymentProvider();

/**
 * The provider that charges cards for a tenant's environment: the sandbox in test; in live, none is built in
 * yet (null: the dashboard then says card payment is unavailable instead of taking card details).
 * A live provider (e.g. Stripe) implements PaymentProvider and is returned here.
 */
export function paymentProviderFor(environment: Environment): PaymentProvider | null {
  return environment === 'test' ? sandbox : null;
}

/** A payments row to record; amounts in cents. `groupId` is the order group paid for (null for a decline). */
export interface PaymentRecord {
  provider: string;
  amountCents: number;
  status: 'succeeded' | 'declined' | 'refunded';
  cardLast4: string | null;
  failureMessage?: string | null;
  providerReference?: string | null;
  groupId?: string | null;
  userId: string;
  companyId?: string | null;
}

/** Records one checkout payment attempt (call inside the order's transaction for a success). @returns the pay_ id. */
export async function recordPayment(db: Db, tenant: Tenant, p: PaymentRecord): Promise<string> {
  const row = await one<{ id: string }>(
    db,
    `INSERT INTO payments (id, organization_id, environment, group_id, provider, amount_cents, status, card_last4, failure_message,
                           provider_reference, user_id, company_id, refunded_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, CASE WHEN $7 = 'refunded' THEN now() END) RETURNING id`,
    [newId('payment'), tenant.organizationId, tenant.environment, p.groupId ?? null, p.provider, p.amountCents, p.status, p.cardLast4,
      p.failureMessage ?? null, p.providerReference ?? null, p.userId, p.companyId ?? null],
  );
  return row!.id;
}
