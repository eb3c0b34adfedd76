import type { AppContext } from '../../context.js';
import { withTransaction } from '../../lib/db.js';
import { AppError, FieldErrors, notFound } from '../../lib/errors.js';
import { SecretBoxError } from '../../lib/secret-box.js';
import { findTaxId, type TaxIdRow } from '../orders/ein-tax-ids.repo.js';
import { openTaxId } from '../orders/ein-tax-ids.js';
import * as repo from './filings.repo.js';
import { tenantOf } from './filings.service.js';
import { ss4Worksheet, type Ss4Line } from './ss4-worksheet.js';
import { insertTaxIdReveal, type TaxIdRevealRow } from './tax-id-reveals.repo.js';

/** Longest reveal reason, in characters (LIM-2; the table's CHECK holds the same bound). */
export const MAX_REVEAL_REASON = 500;

/** Who asks to see a tax id, why, and from where (ORD-EIN-7). */
export interface TaxIdRevealRequest {
  /** `operator:<operator id>` (console) or `cli:<os user>` (CLI). */
  actor: string;
  /** Free text, 1 to 500 characters after trimming. */
  reason: string;
  /** The console's client address (request.ip), or the CLI's `cli@<host name>`. */
  clientAddress: string;
}

/** A revealed tax id: the number (123-45-6789), its kind, the SS-4 worksheet, and the record of this reveal. */
export interface RevealedTaxId {
  orderId: string;
  environment: 'live' | 'test';
  taxId: string;
  taxIdType: string | null;
  worksheet: Ss4Line[];
  reveal: TaxIdRevealRow;
}

/**
 * Opens an EIN order's sealed tax id for an operator and records the reveal (ORD-EIN-7), in ONE transaction: the
 * sealed row is locked (FOR SHARE) so no destruction commits in between, the value is opened, the record appended;
 * nothing is shown unless the record committed. Live and test orders alike.
 * @throws ValidationError (400) on `reason` (empty or over 500 characters); AppError not_found (404) for an unknown
 *   order; conflict (409) for an order that is no EIN order, one whose tax id was never kept, one whose tax id was
 *   destroyed (the message names the date), or one sealed under a key this process lacks (the message names it).
 */
export async function revealTaxId(ctx: AppContext, orderId: string, who: TaxIdRevealRequest): Promise<RevealedTaxId> {
  const reason = who.reason.trim();
  const errors = new FieldErrors();
  if (!reason) errors.add('reason', 'is required: say why you need to see the tax id');
  errors.maxLength('reason', reason, MAX_REVEAL_REASON).throwIfAny();
  return withTransaction(ctx.pool, async (tx) => {
    const order = await repo.findOrderDetail(tx, orderId);
    if (!order) throw notFound('order', orderId);
    if (order.order_type !== 'ein')
      throw new AppError('conflict', `Order ${orderId} is a ${order.order_type} order: only EIN orders have a tax id`);
    const taxId = opened(ctx, orderId, await findTaxId(tx, orderId, true));
    const reveal = await insertTaxIdReveal(tx, tenantOf(order), {
      orderId,
      actor: who.actor,
      reason,
      clientAddress: who.clientAddress,
    });
    const party = (order.details.responsibleParty ?? {}) as Record<string, unknown>;
    return {
      orderId,
      environment: order.environment,
      taxId,
      taxIdType: typeof party.taxIdType === 'string' ? party.taxIdType : null,
      worksheet: ss4Worksheet({ details: order.details, company: order.company }, taxId),
      reveal,
    };
  });
}

/** The tax id of a kept row, opened. @throws AppError conflict when there is none to open (see revealTaxId). */
function opened(ctx: AppContext, orderId: string, row: TaxIdRow | null): string {
  if (!row)
    throw new AppError(
      'conflict',
      `No tax id is kept for EIN order ${orderId}: it was placed before the service kept tax ids; ask the customer for it`,
    );
  if (!row.sealed)
    throw new AppError(
      'conflict',
      `The tax id of EIN order ${orderId} was destroyed on ${row.destroyed_at!.toISOString().slice(0, 10)} (UTC), after its retention period`,
    );
  try {
    return openTaxId(ctx.secrets.dataKeys, orderId, row.sealed);
  } catch (err) {
    if (err instanceof SecretBoxError)
      throw new AppError('conflict', `The tax id of ${orderId} cannot be opened: ${err.message}`);
    throw err;
  }
}
