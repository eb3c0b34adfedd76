import type { Db } from '../../lib/db.js';
import { notFound } from '../../lib/errors.js';
import type { LedgerEntryRow } from '../billing/ledger.js';
import type { DocumentRow } from '../documents/documents.repo.js';
import { findRefundOfOrder, type CardRefundView } from '../payments/payments.repo.js';
import * as repo from './filings.repo.js';
import { withFields } from '../../lib/objects.js';
import { findTaxId, type TaxIdRow } from '../orders/ein-tax-ids.repo.js';
import { listTaxIdReveals, type TaxIdRevealRow } from './tax-id-reveals.repo.js';

/** An event of the order with its webhook deliveries (each with every attempt, oldest first). */
interface OrderEventRecord extends repo.OrderEventRow {
  deliveries: repo.DeliveryRow[];
}

/**
 * An order's full record as the operators see it, read once for the admin API (GET /admin/v1/orders/{orderId}),
 * the console's order page and the CLI's `orders show`; each presents it in its own shape. Rows as stored:
 * money in integer cents, dates as Date (created_at) or 'YYYY-MM-DD' (filing dates).
 */
export interface OrderRecord {
  /** The order (every column) with its organization name, the placing request, the user and the company (jsonb). */
  order: repo.OrderDetailRow;
  /** The other orders placed by the same request, by id. */
  siblings: repo.SiblingOrderRow[];
  /** Status changes, oldest first. */
  history: repo.StatusHistoryRow[];
  /** Events of the order within its tenant, oldest first, with their webhook deliveries. */
  events: OrderEventRecord[];
  /** Ledger entries of the order (debits negative, reversals), oldest first; cents. */
  ledger: LedgerEntryRow[];
  /** Documents attached to the order, oldest first. */
  documents: DocumentRow[];
  /** The card refund of a cancelled card-paid order (PAY-6), or null. */
  refund: CardRefundView | null;
  /**
   * Whether an EIN order's tax id is kept (ORD-EIN-6 to ORD-EIN-9): since when it is sealed, or when it was destroyed;
   * null when none was ever kept (another product, or placed before tax ids were kept). Never the sealed text.
   */
  taxId: { sealedAt: Date; destroyedAt: Date | null } | null;
  /** Every reveal of the tax id, oldest first (ORD-EIN-7); empty for other products. */
  taxIdReveals: TaxIdRevealRow[];
  /** Operator id -> 'Name <email>' for every `operator:<id>` actor of the history, documents, ledger and reveals. */
  operatorNames: Map<string, string>;
}

/**
 * Reads an order's full record (any tenant: operators see everything). Reads without locking, outside any
 * transaction of the caller's unless `db` is one.
 * @throws AppError not_found (404) for an unknown order.
 */
export async function loadOrderRecord(db: Db, orderId: string): Promise<OrderRecord> {
  const order = await repo.findOrderDetail(db, orderId);
  if (!order) throw notFound('order', orderId);
  const ein = order.order_type === 'ein';
  const [siblings, history, events, ledger, documents, refund, taxId, taxIdReveals] = await Promise.all([
    repo.findSiblingOrders(db, order.group_id, order.id),
    repo.listStatusHistory(db, order.id),
    repo.findOrderEvents(db, order),
    repo.findOrderLedger(db, order.id),
    repo.findOrderDocuments(db, order.id),
    findRefundOfOrder(db, order.id),
    ein ? findTaxId(db, order.id).then(taxIdState) : null,
    ein ? listTaxIdReveals(db, order.id) : [],
  ]);
  const deliveries = await repo.findDeliveries(
    db,
    events.map((e) => e.id),
  );
  const actors = [
    ...history.map((h) => h.actor),
    ...documents.map((d) => d.uploaded_by),
    ...ledger.map((l) => l.created_by ?? ''),
    ...taxIdReveals.map((r) => r.actor),
  ];
  const names = await repo.operatorNames(
    db,
    actors.filter((a) => a.startsWith('operator:')).map((a) => a.slice('operator:'.length)),
  );
  return {
    order,
    siblings,
    history,
    events: events.map((e) => withFields(e, { deliveries: deliveries.filter((d) => d.event_id === e.id) })),
    ledger,
    documents,
    refund,
    taxId,
    taxIdReveals,
    operatorNames: names,
  };
}

/** A kept tax id row as the record shows it: its dates, without the sealed text. */
function taxIdState(row: TaxIdRow | null): OrderRecord['taxId'] {
  return row ? { sealedAt: row.sealed_at, destroyedAt: row.destroyed_at } : null;
}
