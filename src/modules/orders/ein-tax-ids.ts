import type pg from 'pg';
import type { Tenant } from '../../context.js';
import { withTransaction, type Db } from '../../lib/db.js';
import { open, seal, type Keyring } from '../../lib/secret-box.js';
import type { ResponsibleParty } from './ein.schemas.js';
import { storedResponsibleParty } from './order-pricing.js';
import { requestFromOrders } from './placed-request.js';
import * as repo from './ein-tax-ids.repo.js';

/*
 * The EIN responsible party's tax id at rest (ORD-EIN-6 to ORD-EIN-9). SS-4 line 7b needs the whole SSN or ITIN, so
 * it is kept, but only sealed (src/lib/secret-box.ts: AES-256-GCM under the data keyring, SEC-2) with the order id as
 * associated data, so a sealed value copied to another order does not open. The plaintext sealed is the nine digits
 * without hyphens; the order's details keep the last four for every view. It is opened only for an operator's
 * recorded reveal (filings/tax-id-reveal.ts) and destroyed a retention period after the order is filed or cancelled.
 */

/** The nine digits of a tax id given with or without hyphens ('123-45-6789' -> '123456789'). */
function taxIdDigits(taxId: string): string {
  return taxId.replace(/-/g, '');
}

/** Seals a tax id (with or without hyphens) for order `orderId` under the keyring's current key (ORD-EIN-6). */
export function sealTaxId(keyring: Keyring, orderId: string, taxId: string): string {
  return seal(keyring, taxIdDigits(taxId), orderId);
}

/**
 * Opens order `orderId`'s sealed tax id with whichever key of the keyring sealed it (DATA_ENCRYPTION_KEY or one in
 * DATA_ENCRYPTION_KEY_PREVIOUS). @returns it as 123-45-6789.
 * @throws SecretBoxError when its key is not in the keyring, or the value belongs to another order or was altered.
 */
export function openTaxId(keyring: Keyring, orderId: string, sealed: string): string {
  const d = open(keyring, sealed, orderId);
  return `${d.slice(0, 3)}-${d.slice(3, 5)}-${d.slice(5)}`;
}

/**
 * Replaces the responsible party of EIN order `orderId` inside the caller's transaction (ORD-EIN-8; the caller holds
 * the order's row lock and moves its status): the new tax id is sealed in place of the old one (which is destroyed),
 * and the order's details get the new party with its last four digits. A group that kept no copy of its request
 * (ORD-19) first keeps the one its orders give back now, so the request shown stays the one that was sent.
 */
export async function replaceResponsibleParty(
  tx: Db,
  keyring: Keyring,
  tenant: Tenant,
  orderId: string,
  party: ResponsibleParty,
): Promise<void> {
  const group = await repo.findGroupOfOrder(tx, orderId);
  if (!group) throw new Error(`order '${orderId}' has no group`);
  if (!group.request_kept) {
    const formsCompany = group.orders.some((o) => o.orderType === 'formation');
    const sent = requestFromOrders(
      { userId: group.user_id, filingState: group.filing_state, companyId: group.company_id, formsCompany },
      group.orders,
    );
    await repo.keepGroupRequest(tx, group.group_id, sent);
  }
  await repo.updateResponsibleParty(tx, orderId, storedResponsibleParty(party));
  await repo.replaceTaxId(tx, tenant, orderId, sealTaxId(keyring, orderId, party.taxId));
}

/**
 * Destroys every sealed tax id `retentionDays` days after its order reached `filed` or `cancelled` (ORD-EIN-9): the
 * daily maintenance job and `cli orders purge-tax-ids`. Nothing else changes. `asOf`: the moment to count from
 * (default: the database's now; tests look ahead). @returns how many were destroyed.
 */
export function destroyExpiredTaxIds(db: Db, retentionDays: number, asOf?: Date): Promise<number> {
  return repo.destroyTaxIdsPastRetention(db, retentionDays, asOf);
}

const BATCH = 200;

/**
 * Re-seals every kept tax id that is not sealed under the keyring's current key (`cli secrets rotate-key`, SEC-2), in
 * batches of 200, each one transaction that locks its rows. @returns how many were re-sealed.
 * @throws SecretBoxError when one is sealed under a key the keyring lacks (nothing of that batch is written).
 */
export async function resealTaxIds(pool: pg.Pool, keyring: Keyring): Promise<number> {
  let resealed = 0;
  let after = '';
  for (;;) {
    const rows = await withTransaction(pool, async (tx) => {
      const batch = await repo.lockTaxIdsToReseal(tx, after, BATCH, `sealed:v1:${keyring.current.id}:`);
      for (const r of batch)
        await repo.updateSealedTaxId(tx, r.order_id, seal(keyring, open(keyring, r.sealed, r.order_id), r.order_id));
      return batch;
    });
    resealed += rows.length;
    if (rows.length < BATCH) return resealed;
    after = rows[rows.length - 1]!.order_id;
  }
}

/** Key ids found on kept tax ids, with how many each seals. */
export async function taxIdKeyUsage(db: Db): Promise<Record<string, number>> {
  const rows = await repo.countTaxIdsByKey(db);
  return Object.fromEntries(rows.map((r) => [r.key, r.n]));
}
