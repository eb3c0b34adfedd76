import { randomBytes } from 'node:crypto';
import type { AppContext, Environment, Tenant } from '../src/context.js';
import { withTransaction } from '../src/lib/db.js';
import { newId } from '../src/lib/ids.js';
import { creditBalance } from '../src/modules/billing/ledger.js';
import { changeOrderStatus, recordPlacement } from '../src/modules/orders/orders.service.js';
import type { TestTenant } from './harness.js';

/** The service's tenant (TEN-1) of a test tenant: its organization in `environment` (test unless given). */
export const tenantOf = (tenant: TestTenant, environment: Environment = 'test'): Tenant => ({
  organizationId: tenant.organizationId,
  environment,
});

/** A unique, valid email address. */
export const uniqueEmail = (name = 'user') => `${name}.${randomBytes(5).toString('hex')}@example.com`;

/** A valid US address (Delaware). */
export const usAddress = (overrides: Record<string, unknown> = {}) => ({
  line1: '251 Little Falls Drive',
  city: 'Wilmington',
  state: 'DE',
  postalCode: '19808',
  country: 'US',
  ...overrides,
});

/** A valid PERSON officer. */
export const personOfficer = (overrides: Record<string, unknown> = {}) => ({
  type: 'PERSON',
  firstName: 'Ada',
  lastName: 'Lovelace',
  title: 'Managing Member',
  address: usAddress(),
  isPrimary: true,
  ...overrides,
});

/** The company fields of a valid LLC (no userId): what POST /companies and formation.company take. */
export const llcFields = (overrides: Record<string, unknown> = {}) => ({
  legalName: 'Acme Holdings LLC',
  entityType: 'LLC',
  structureType: 'MEMBER',
  formationDate: '2024-03-01',
  formationState: 'DE',
  principalAddress: usAddress(),
  mailingAddress: usAddress(),
  officers: [personOfficer()],
  ...overrides,
});

/** The company fields of a valid CORP (no userId). */
export const corpFields = (overrides: Record<string, unknown> = {}) => ({
  legalName: 'Acme Corp',
  entityType: 'CORP',
  taxElection: 'C Corporation',
  principalAddress: usAddress(),
  mailingAddress: usAddress(),
  officers: [personOfficer({ title: 'President' })],
  ...overrides,
});

/** Creates a user through the API and returns the response body. */
export async function createUser(
  tenant: TestTenant,
  env: Environment = 'test',
  overrides: Record<string, unknown> = {},
) {
  const res = await tenant.api(
    'POST',
    '/users',
    { fullName: 'Ada Lovelace', email: uniqueEmail(), ...overrides },
    { env },
  );
  if (res.statusCode !== 201) throw new Error(`createUser: ${res.statusCode} ${res.body}`);
  return res.json<{ id: string; email: string; fullName: string; phoneNumber: string | null }>();
}

/** Creates a user and a company (an LLC, or a CORP when overrides.entityType is CORP) owned by that user; returns both bodies. */
export async function createCompany(
  tenant: TestTenant,
  env: Environment = 'test',
  overrides: Record<string, unknown> = {},
) {
  const user = await createUser(tenant, env);
  const base = overrides.entityType === 'CORP' ? corpFields() : llcFields();
  const res = await tenant.api('POST', '/companies', { ...base, userId: user.id, ...overrides }, { env });
  if (res.statusCode !== 201) throw new Error(`createCompany: ${res.statusCode} ${res.body}`);
  return { user, company: res.json<{ id: string; slug: string; legalName: string } & Record<string, unknown>>() };
}

/** Options of {@link createOrderRow}; every field has a default. Money in cents. */
export interface OrderRowOptions {
  orderType?: string;
  filingState?: string;
  filingStatus?: 'submitted' | 'pending' | 'filed' | 'exception' | 'cancelled';
  filingType?: string | null;
  /** The product object kept on the order (e.g. an annual report's `{filingYear}`); default `{}`. */
  details?: Record<string, unknown>;
  /** With filingStatus `filed`: the filing date, 'YYYY-MM-DD'. */
  filingDate?: string;
  subscriptionStatus?: 'active' | 'canceled' | 'past_due' | null;
  billing?: 'balance' | 'checkout';
  /** Charged for the order. With balance billing the tenant is credited this much and then debited (one or more lines). */
  debitLines?: Array<{ amountCents: number; lineType: string }>;
  companyId?: string;
  userId?: string;
  legalName?: string;
  entityType?: 'LLC' | 'CORP';
  companyEin?: string | null;
}

/** What {@link createOrderRow} made. */
export interface OrderRowResult {
  orderId: string;
  companyId: string;
  userId: string;
  groupId: string;
  tenant: Tenant;
}

/**
 * Places an order through the orders module's placement writer (organization must exist: use `t.newTenant()`),
 * with a user and a company (SQL) unless given: order group, `submitted` status-history row and event, and for
 * balance billing the credit and debit ledger entries of `debitLines`; a `filingStatus` other than submitted (or a
 * subscriptionStatus other than the placed one) is then set through the status-change function (history, event). For
 * tests of the filing pipeline that must not depend on POST /orders.
 */
export async function createOrderRow(
  ctx: AppContext,
  tenant: Tenant,
  o: OrderRowOptions = {},
): Promise<OrderRowResult> {
  const orderType = o.orderType ?? 'formation';
  const billing = o.billing ?? 'balance';
  const lines = o.debitLines ?? [];
  const total = lines.reduce((s, l) => s + l.amountCents, 0);
  if (billing === 'balance' && total > 0) await creditBalance(ctx.pool, tenant, total, 'test factory credit', 'test');
  return withTransaction(ctx.pool, async (tx) => {
    const t = [tenant.organizationId, tenant.environment];
    const userId = o.userId ?? newId('user');
    if (!o.userId) {
      const email = uniqueEmail();
      await tx.query(
        `INSERT INTO users (id, organization_id, environment, full_name, email, email_normalized) VALUES ($1, $2, $3, 'Ada Lovelace', $4, $4)`,
        [userId, ...t, email],
      );
    }
    const companyId = o.companyId ?? newId('company');
    if (!o.companyId) {
      await tx.query(
        `INSERT INTO companies (id, organization_id, environment, slug, legal_name, entity_type, structure_type, tax_election, ein, formation_state, principal_address, mailing_address)
         VALUES ($1, $2, $3, $1, $4, $5, $6, $7, $8, $9, $10, $10)`,
        [
          companyId,
          ...t,
          o.legalName ?? 'Acme Holdings LLC',
          o.entityType ?? 'LLC',
          (o.entityType ?? 'LLC') === 'LLC' ? 'MEMBER' : null,
          o.entityType === 'CORP' ? 'C Corporation' : null,
          o.companyEin ?? null,
          o.filingState ?? 'DE',
          JSON.stringify(usAddress()),
        ],
      );
      await tx.query(
        `INSERT INTO company_admins (company_id, user_id, organization_id, environment) VALUES ($1, $2, $3, $4)`,
        [companyId, userId, ...t],
      );
    }
    // The orders module's own writers (ORD-13, ORD-14): placed at submitted, then moved if asked.
    const groupId = newId('orderGroup');
    const orderId = newId('order');
    const filingState = o.filingState ?? 'DE';
    const placedSubscription = ['registered_agent', 'annual_report'].includes(orderType) ? 'active' : null;
    const subscription = o.subscriptionStatus !== undefined ? o.subscriptionStatus : placedSubscription;
    await recordPlacement(tx, tenant, {
      rows: {
        company: null,
        group: { id: groupId, userId, companyId, filingState, source: 'api', billing, request: {}, totalCents: total },
        orders: [
          {
            id: orderId,
            company_id: companyId,
            user_id: userId,
            order_type: orderType,
            filing_state: filingState,
            filing_type: o.filingType ?? null,
            subscription_status: placedSubscription,
            details: o.details ?? {},
            billing,
            amount_cents: total,
            retail_cents: null,
            margin_cents: null,
          },
        ],
        actor: 'api',
      },
      debits:
        billing === 'balance' ? lines.map((l) => ({ ...l, description: `${l.lineType} (${orderId})`, orderId })) : [],
      existing: new Map(),
      order: [0],
      totalCents: total,
    });
    const filingStatus = o.filingStatus ?? 'submitted';
    if (filingStatus !== 'submitted' || subscription !== placedSubscription) {
      await changeOrderStatus(tx, tenant, {
        orderId,
        actor: 'test_helper',
        ...(filingStatus !== 'submitted'
          ? { filing: { from: 'submitted', to: filingStatus, filingDate: o.filingDate ?? null } }
          : {}),
        ...(subscription !== placedSubscription ? { subscription: { status: subscription } } : {}),
      });
    }
    return { orderId, companyId, userId, groupId, tenant };
  });
}
