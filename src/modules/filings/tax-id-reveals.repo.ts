import type { Tenant } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';
import { newId } from '../../lib/ids.js';

// The record of every reveal of an EIN order's tax id (`tax_id_reveals`, migration 105; ORD-EIN-7). Append-only: the
// service role may only read and insert it, and a trigger refuses changes for every role.

/** One reveal: who (`operator:<id>` or `cli:<os user>`), when, why and from which address. */
export interface TaxIdRevealRow {
  id: string;
  order_id: string;
  actor: string;
  reason: string;
  client_address: string;
  created_at: Date;
}

/** Appends one reveal of order `orderId`'s tax id. @returns the record written. */
export async function insertTaxIdReveal(
  tx: Db,
  tenant: Tenant,
  r: { orderId: string; actor: string; reason: string; clientAddress: string },
): Promise<TaxIdRevealRow> {
  const row = await one<TaxIdRevealRow>(
    tx,
    `INSERT INTO tax_id_reveals (id, order_id, organization_id, environment, actor, reason, client_address)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     RETURNING id, order_id, actor, reason, client_address, created_at`,
    [newId('taxIdReveal'), r.orderId, tenant.organizationId, tenant.environment, r.actor, r.reason, r.clientAddress],
  );
  return row!;
}

/** Every reveal of the order's tax id, oldest first. */
export function listTaxIdReveals(db: Db, orderId: string): Promise<TaxIdRevealRow[]> {
  return many<TaxIdRevealRow>(
    db,
    `SELECT id, order_id, actor, reason, client_address, created_at FROM tax_id_reveals
      WHERE order_id = $1 ORDER BY created_at, id`,
    [orderId],
  );
}
