import type { Tenant } from '../../context.js';
import type { Db } from '../../lib/db.js';
import type { Keyring } from '../../lib/secret-box.js';
import type { FieldError } from '../../lib/errors.js';
import type { OrganizationRow } from '../organizations/organizations.repo.js';
import { placeOrderInTx, type CheckedOrderBody } from '../orders/orders.service.js';
import { placeCertificateInTx } from './certificate-orders.js';
import { lockCheckoutForm, placedByForm, type IssuedFormToken } from './checkout-forms.js';
import type { FormValues } from './checkout.forms.js';
import type { CheckoutOptions, ProductKey } from './checkout.products.js';
import type { CompanyRow } from './dashboard.repo.js';
import type { DashboardSession } from './sessions.js';

/*
 * What both ways of paying a dashboard checkout share (checkout.service.ts for balance and card, hosted-checkout.ts
 * for hosted payment pages): the submit and its outcome, the placement of a paid intent and the form-token guard.
 * Kept apart from both so neither imports the other.
 */

/** How a dashboard order is paid: `balance` (prepaid balance, wholesale) or `checkout` (the customer's card, retail). */
export type Billing = 'balance' | 'checkout';

/** The outcome of a checkout submit: the placed group, or what to show the customer (`expired`: a stale form token). */
export type CheckoutOutcome =
  | { ok: true; companyId: string; groupId: string }
  /** Customer billing through a hosted payment page (PAY-2): send the customer there; the order follows the payment. */
  | { ok: true; redirectTo: string }
  | { ok: false; errors: FieldError[]; message: string | null; expired?: boolean };

/** Everything a checkout submit needs: who orders what for which company, the posted form, and the form token. */
export interface CheckoutSubmit {
  tenant: Tenant;
  organization: OrganizationRow;
  userId: string;
  company: CompanyRow | null;
  product: ProductKey;
  options: CheckoutOptions;
  form: FormValues;
  activeAgent: boolean;
  /** The signed-in session (the form token must have been issued to it). */
  session: DashboardSession;
  /**
   * The form's one-time token (`_checkout`), checked as issued to this session (issuedCheckoutForm); null for a post
   * without one (placed without double-submit protection).
   */
  formToken: IssuedFormToken | null;
  /** Customer billing: the total (cents) the page showed; when the price changed since, nothing is charged. */
  expectedTotalCents?: number | null;
  /** Hosted payment pages (PAY-2): the dashboard's absolute address (origin + base path) and the e-mail to prefill. */
  hosted?: { siteUrl: string; customerEmail: string };
}

/**
 * What a checkout places once paid (or at once when the organization pays): an order request (checked when the form
 * was submitted), or a certificate.
 */
export type PlacementIntent =
  | { kind: 'order'; body: CheckedOrderBody; pricing: { formationTier?: 1 | 2 | 3; dbaName?: string } }
  | { kind: 'certificate'; userId: string; companyId: string; filingState: string };

/**
 * Places a checkout's orders inside the caller's transaction: the one placement of every dashboard order, by
 * balance, sandbox card or hosted payment (PAY-3: retail, wholesale and margin recorded the same way). With
 * `idempotencyKey` an earlier group under that key is returned.
 * `dataKeys` seals an EIN responsible party's tax id (ORD-EIN-6).
 * @returns the group (null when nothing was created), the company and the total in cents.
 * @throws AppError from the database rules; insufficient_balance (402) for balance billing.
 */
export async function placeCheckoutIntent(
  tx: Db,
  tenant: Tenant,
  intent: PlacementIntent,
  billing: Billing,
  idempotencyKey: string | undefined,
  dataKeys: Keyring,
) {
  return intent.kind === 'order'
    ? placeOrderInTx(
        tx,
        tenant,
        intent.body,
        { source: 'dashboard', billing, actor: 'dashboard', ...intent.pricing, idempotencyKey },
        dataKeys,
      )
    : placeCertificateInTx(
        tx,
        tenant,
        { userId: intent.userId, companyId: intent.companyId, filingState: intent.filingState },
        billing,
        'dashboard',
        idempotencyKey,
      );
}

/** The outcome of a form whose token was not issued to this session, is too old or forged (DASH-9). */
export const EXPIRED_FORM: CheckoutOutcome & { ok: false } = {
  ok: false,
  errors: [],
  expired: true,
  message: 'This order form has expired. Please review the order and submit it again.',
};

/**
 * The outcome when the page showed a total (`expected`, cents) other than what the order costs now (`total`, cents):
 * nothing is charged and the customer reviews the new total (DASH-8). Null when they agree or the page showed none.
 */
export function priceChangedOutcome(expected: number | null | undefined, total: number): CheckoutOutcome | null {
  if (expected == null || expected === total) return null;
  return {
    ok: false,
    errors: [],
    message:
      'The price changed since this page was loaded. Please review the new total and pay again; you have not been charged.',
  };
}

/**
 * With a form token: creates or locks its row, then answers with the orders an earlier submit of the form placed, if
 * any (DASH-9).
 */
export async function guardForm(
  tx: Db,
  s: CheckoutSubmit,
): Promise<{ outcome: CheckoutOutcome } | { key: string | undefined; attempts: number }> {
  if (!s.formToken) return { key: undefined, attempts: 0 };
  const form = await lockCheckoutForm(tx, s.session, s.formToken);
  if (!form) return { outcome: EXPIRED_FORM };
  const earlier = await placedByForm(tx, s.tenant, s.formToken);
  if (earlier) return { outcome: { ok: true, ...earlier } };
  return form;
}
