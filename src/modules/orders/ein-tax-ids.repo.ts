import type { Tenant } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';

// The sealed tax ids of EIN orders (`ein_tax_ids`, migration 105; ORD-EIN-6 to ORD-EIN-9) and the order rows a
// correction of the responsible party changes (ORD-EIN-8). The placement writes the first row of an order in its
// own statement (place_order_groups_of_tenants).

/** An ein_tax_ids row: `sealed` is sealed text (never the number in clear), null once destroyed. */
export interface TaxIdRow {
  order_id: string;
  organization_id: string;
  environment: 'live' | 'test';
  sealed: string | null;
  sealed_at: Date;
  destroyed_at: Date | null;
}

const COLUMNS = 'order_id, organization_id, environment, sealed, sealed_at, destroyed_at';

/**
 * The order's sealed tax id row, or null when none was ever kept (an order that is no EIN order, or one placed before
 * tax ids were kept). With `lock` the row is locked FOR SHARE until the transaction ends, so no destruction commits
 * between reading the value and recording who saw it.
 */
export function findTaxId(db: Db, orderId: string, lock = false): Promise<TaxIdRow | null> {
  return one<TaxIdRow>(db, `SELECT ${COLUMNS} FROM ein_tax_ids WHERE order_id = $1${lock ? ' FOR SHARE' : ''}`, [
    orderId,
  ]);
}

/** Writes the order's sealed tax id in place of whatever was there (the old sealed text is gone), kept from now. */
export async function replaceTaxId(tx: Db, tenant: Tenant, orderId: string, sealed: string): Promise<void> {
  await tx.query(
    `INSERT INTO ein_tax_ids (order_id, organization_id, environment, sealed) VALUES ($1, $2, $3, $4)
     ON CONFLICT (order_id) DO UPDATE SET sealed = EXCLUDED.sealed, sealed_at = now(), destroyed_at = NULL`,
    [orderId, tenant.organizationId, tenant.environment, sealed],
  );
}

/**
 * Destroys (sets NULL) every sealed tax id whose order reached `filed` or `cancelled` more than `retentionDays` days
 * before `asOf` (default: the database's now) (ORD-EIN-9): the time of the status-history row that moved it there.
 * @returns how many were destroyed.
 */
export async function destroyTaxIdsPastRetention(db: Db, retentionDays: number, asOf?: Date): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE ein_tax_ids t SET sealed = NULL, destroyed_at = now()
       FROM orders o
      WHERE t.sealed IS NOT NULL AND o.id = t.order_id AND o.filing_status IN ('filed', 'cancelled')
        AND (SELECT max(h.created_at) FROM order_status_history h
              WHERE h.order_id = o.id AND h.to_status = o.filing_status)
            < coalesce($2::timestamptz, now()) - make_interval(days => $1)`,
    [retentionDays, asOf ?? null],
  );
  return rowCount ?? 0;
}

/**
 * Up to `limit` kept tax ids after order id `after`, in order id order, locked FOR UPDATE, that are not sealed under
 * the key whose sealed text starts like `currentPrefix` (`sealed:v1:<key id>:`).
 */
export function lockTaxIdsToReseal(
  tx: Db,
  after: string,
  limit: number,
  currentPrefix: string,
): Promise<Array<{ order_id: string; sealed: string }>> {
  return many(
    tx,
    `SELECT order_id, sealed FROM ein_tax_ids
      WHERE sealed IS NOT NULL AND order_id > $1 AND NOT starts_with(sealed, $3)
      ORDER BY order_id LIMIT $2 FOR UPDATE`,
    [after, limit, currentPrefix],
  );
}

/** Stores a kept tax id sealed again (key rotation); its retention clock is not touched. */
export async function updateSealedTaxId(tx: Db, orderId: string, sealed: string): Promise<void> {
  await tx.query('UPDATE ein_tax_ids SET sealed = $2 WHERE order_id = $1 AND sealed IS NOT NULL', [orderId, sealed]);
}

/** How many kept tax ids each key id seals. */
export function countTaxIdsByKey(db: Db): Promise<Array<{ key: string; n: number }>> {
  return many(
    db,
    `SELECT split_part(sealed, ':', 3) AS key, count(*)::int AS n FROM ein_tax_ids
      WHERE sealed IS NOT NULL GROUP BY 1 ORDER BY 1`,
  );
}

/**
 * What a correction needs of an order's group: its user, filing state and company, and — when the group keeps no
 * copy of its request (ORD-19) — its orders' products and details as they are now.
 */
export interface GroupOfOrder {
  group_id: string;
  user_id: string;
  filing_state: string;
  company_id: string;
  request_kept: boolean;
  orders: Array<{ orderType: string; details: Record<string, unknown> | null }>;
}

/** The group of order `orderId` with its orders (read inside the caller's transaction, after the order's lock). */
export function findGroupOfOrder(tx: Db, orderId: string): Promise<GroupOfOrder | null> {
  return one<GroupOfOrder>(
    tx,
    `SELECT g.id AS group_id, g.user_id, g.filing_state, g.company_id, g.request IS NOT NULL AS request_kept,
            (SELECT coalesce(jsonb_agg(jsonb_build_object('orderType', s.order_type, 'details', s.details) ORDER BY s.id), '[]')
               FROM orders s WHERE s.group_id = g.id) AS orders
       FROM orders o JOIN order_groups g ON g.id = o.group_id
      WHERE o.id = $1`,
    [orderId],
  );
}

/** Stores a group's request (ORD-19: once kept, it is what readers show). Only a group that kept none is changed. */
export async function keepGroupRequest(tx: Db, groupId: string, request: Record<string, unknown>): Promise<void> {
  await tx.query('UPDATE order_groups SET request = $2 WHERE id = $1 AND request IS NULL', [groupId, request]);
}

/** Replaces the responsible party in an EIN order's details (ORD-EIN-8); the party as stored (taxIdLast4, no taxId). */
export async function updateResponsibleParty(tx: Db, orderId: string, party: Record<string, unknown>): Promise<void> {
  await tx.query(
    `UPDATE orders SET details = jsonb_set(details, '{responsibleParty}', $2::jsonb), updated_at = now()
      WHERE id = $1 AND order_type = 'ein'`,
    [orderId, JSON.stringify(party)],
  );
}
