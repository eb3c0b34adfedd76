import type { Tenant } from '../../context.js';
import { manyPrepared, type Db } from '../../lib/db.js';
import type { LedgerLine } from '../billing/billing.repo.js';
import { insufficientBalance } from '../billing/ledger.js';
import type { CompanyColumns } from '../companies/companies.repo.js';
import { KEY_TTL_HOURS } from '../idempotency/idempotency.repo.js';

// Writing placements (ORD-13, ORD-17, ORD-40): the one statement `place_order_groups_of_tenants`
// (migrations/repeatable/place_order_groups_of_tenants.sql), of one tenant's placements or several tenants', and the
// rows it takes. Reading orders and changing their status are in orders.repo.ts.

/** An order_groups row to insert (one per request). */
interface NewOrderGroup {
  id: string;
  userId: string;
  companyId: string;
  filingState: string;
  source: 'api' | 'dashboard';
  billing: 'balance' | 'checkout';
  /** The request as kept (ORD-12), or null when its orders give it back exactly (ORD-19, `requestToKeep`). */
  request: Record<string, unknown> | null;
  totalCents: number;
  /** The request's Idempotency-Key, when it carried one. */
  idempotencyKey?: string | null;
}

/** One order of a placement, as inserted (filing_status submitted). Money in cents. */
export interface PlacementOrder {
  id: string;
  company_id: string;
  user_id: string;
  order_type: string;
  filing_state: string;
  filing_type: string | null;
  subscription_status: 'active' | null;
  details: Record<string, unknown>;
  billing: 'balance' | 'checkout';
  amount_cents: number;
  retail_cents: number | null;
  margin_cents: number | null;
  /** An EIN order's responsible party tax id, sealed for this order (ORD-EIN-6); absent or null for every other. */
  tax_id_sealed?: string | null;
}

/** Everything one placement inserts besides the ledger and the events (ORD-13). */
export interface PlacementRows {
  /** A company formed by this placement, with the slug to use; null when the orders are for an existing company. */
  company: { id: string; slug: string; columns: CompanyColumns; adminUserId: string } | null;
  group: NewOrderGroup;
  orders: PlacementOrder[];
  /** Status-history actor of the `submitted` rows. */
  actor: string;
}

/** Everything {@link insertPlacements} writes for one placement, planned in full by the caller (ids, amounts, event data, ledger lines). */
export interface PlacementWrite {
  rows: PlacementRows;
  /** The id of each order's `submitted` history row, in the order of `rows.orders`. */
  historyIds: string[];
  /**
   * One filing.status_changed event per order: {id, type, data}, and the `traceparent` of the request that placed it
   * when a span was active (OPS-31: the placement is written by a batch statement, outside the request's context).
   */
  events: Array<{ id: string; type: string; data: Record<string, unknown>; traceparent?: string }>;
  /** Ledger entries to post last (empty for checkout). */
  debits: LedgerLine[];
  /** The balance must be at least this many cents for the debits to be posted. */
  minBalanceCents: number;
}

/**
 * What the placement statement did with one placement: placed (with the orders' created_at), or nothing because of
 * the user, the slug, or an earlier order group with the same Idempotency-Key (see `place_order_groups_of_tenants`).
 */
export type PlacementOutcome =
  | { outcome: 'placed'; createdAt: Date; wake: PlacementWake }
  | { outcome: 'unknown_user' | 'slug_taken' | 'earlier' };

/**
 * Whom the placement's commit concerns (OPS-6), as the statement found it: `deliveries` when it wrote webhook
 * deliveries (the dispatchers must look), `streams` when an event stream of the tenant is open on some process.
 */
export interface PlacementWake {
  deliveries: boolean;
  streams: boolean;
}

/** What `place_order_groups_of_tenants` answers for one tenant (migrations/repeatable/place_order_groups_of_tenants.sql). */
interface PlacementResult {
  outcomes: Array<PlacementOutcome['outcome']>;
  created_at: string;
  deliveries: boolean;
  streams: boolean;
}

/**
 * Writes placements of ONE tenant in ONE statement through the database function `place_order_groups_of_tenants`
 * (ORD-13, ORD-17): for each, the company of a formation and its admin link, the order group, the orders, their `submitted`
 * history, the events with their deliveries; and last the debits of all of them in one posting (the balance row is
 * locked only for it and the commit). On a pool the statement is its own transaction; on a client it joins the
 * caller's.
 * @returns one outcome per write, in order; a write refused for its user, slug or Idempotency-Key wrote nothing. A
 * placed one says whom the statement's commit concerns (`wake`, the same for every write of the statement, OPS-6).
 * @throws AppError insufficient_balance (402) when the balance is below the sum of the writes' `minBalanceCents`:
 * NOTHING was written (inside a transaction the transaction is aborted and must be rolled back). With several
 * writes the caller cannot tell which of them the balance would cover: it places them one at a time.
 */
export async function insertPlacements(db: Db, tenant: Tenant, writes: PlacementWrite[]): Promise<PlacementOutcome[]> {
  try {
    return (await insertPlacementsOfTenants(db, [{ tenant, writes }]))[0]!;
  } catch (err) {
    const e = err as { code?: string; detail?: string };
    if (e.code === 'FC402') {
      const needed = writes.reduce((sum, w) => sum + w.minBalanceCents, 0);
      throw insufficientBalance(tenant, needed, Number(e.detail));
    }
    throw err;
  }
}

/** One tenant's placements, as {@link insertPlacementsOfTenants} takes them. */
export interface TenantPlacements {
  tenant: Tenant;
  writes: PlacementWrite[];
}

/**
 * Writes the placements of several tenants in ONE statement, so one transaction and one commit, through the database
 * function `place_order_groups_of_tenants` (ORD-40): each tenant's as {@link insertPlacements} would write them alone,
 * every tenant's rows by one INSERT per table, the balance locks taken last and in the order of (organization id,
 * environment) whatever the order of `batches`, so concurrent statements never deadlock. On a pool the statement is
 * its own transaction; on a client it joins the caller's.
 * @returns for each element of `batches`, one outcome per write, in order.
 * @throws the database's error when anything fails, SQLSTATE FC402 when one tenant's balance cannot cover its
 * placements: NOTHING was written for any tenant (the error does not say whose balance was short; the caller writes
 * each tenant's placements again on their own).
 */
export async function insertPlacementsOfTenants(db: Db, batches: TenantPlacements[]): Promise<PlacementOutcome[][]> {
  const [row] = await manyPrepared<{ r: PlacementResult[] }>(
    db,
    'place_order_groups_of_tenants',
    'SELECT place_order_groups_of_tenants($1::jsonb) AS r',
    [JSON.stringify(batches.map((b) => placementsPayload(b.tenant, b.writes)))],
  );
  return row!.r.map(outcomesOf);
}

/** One outcome per placement from one tenant's answer of `place_order_groups_of_tenants`. */
function outcomesOf({ outcomes, created_at, deliveries, streams }: PlacementResult): PlacementOutcome[] {
  const createdAt = new Date(created_at);
  const wake = { deliveries, streams };
  return outcomes.map((outcome) => (outcome === 'placed' ? { outcome, createdAt, wake } : { outcome }));
}

/**
 * One tenant's part of the statement as `place_order_groups_of_tenants` reads it: every row an object whose keys are
 * the function's column names (migrations/repeatable/place_order_groups_of_tenants.sql), tagged with `n`, the 1-based position of its placement's group.
 * An order's group, company, user, filing state and billing are its group's (ORD-4), so they are not repeated; its
 * `submitted` history row's id rides on it. The events and debits are emit_events_of_tenants' and
 * post_ledger_entries_of_tenants' rows with their placement's `n` added (those functions read only the keys they name). A null value is left out (`?? undefined`:
 * JSON.stringify drops the key), as the function reads a missing key as NULL: less JSON for the database to parse.
 */
function placementsPayload(tenant: Tenant, writes: PlacementWrite[]) {
  const payload = {
    organization_id: tenant.organizationId,
    environment: tenant.environment,
    idempotency_key_ttl_hours: KEY_TTL_HOURS,
    groups: [] as object[],
    companies: [] as object[],
    orders: [] as object[],
    events: [] as object[],
    debits: [] as object[],
  };
  for (const [i, w] of writes.entries()) {
    const n = i + 1;
    const { group, company, orders, actor } = w.rows;
    payload.groups.push({
      n,
      id: group.id,
      user_id: group.userId,
      company_id: group.companyId,
      forms: company !== null,
      filing_state: group.filingState,
      source: group.source,
      billing: group.billing,
      request: group.request ?? undefined,
      total_cents: group.totalCents,
      idempotency_key: group.idempotencyKey ?? undefined,
      min_balance_cents: w.minBalanceCents,
      actor,
    });
    if (company) payload.companies.push(companyRow(n, company.id, company.slug, company.columns));
    for (const [j, o] of orders.entries()) {
      sameAsGroup(o, group);
      payload.orders.push({
        n,
        id: o.id,
        history_id: w.historyIds[j],
        order_type: o.order_type,
        filing_type: o.filing_type ?? undefined,
        subscription_status: o.subscription_status ?? undefined,
        details: o.details,
        amount_cents: o.amount_cents,
        retail_cents: o.retail_cents ?? undefined,
        margin_cents: o.margin_cents ?? undefined,
        tax_id_sealed: o.tax_id_sealed ?? undefined,
      });
    }
    for (const e of w.events)
      payload.events.push({ n, id: e.id, type: e.type, data: e.data, traceparent: e.traceparent });
    for (const d of w.debits) {
      payload.debits.push({
        n,
        type: d.type,
        amount_cents: d.amount_cents,
        line_type: d.line_type ?? undefined,
        description: d.description,
        order_id: d.order_id ?? undefined,
        reverses_entry_id: d.reverses_entry_id ?? undefined,
        created_by: d.created_by ?? undefined,
      });
    }
  }
  return payload;
}

/**
 * The statement takes an order's company, user, filing state and billing from its group (ORD-4): an order planned with
 * others would be written with its group's, so it is refused here instead. @throws Error naming the column.
 */
function sameAsGroup(o: PlacementOrder, group: NewOrderGroup): void {
  const differs =
    (o.company_id !== group.companyId && 'company_id') ||
    (o.user_id !== group.userId && 'user_id') ||
    (o.filing_state !== group.filingState && 'filing_state') ||
    (o.billing !== group.billing && 'billing');
  if (differs) throw new Error(`order ${o.id}: ${differs} differs from its group's (ORD-4)`);
}

/** A formed company's row for `place_order_groups_of_tenants`, by the function's column names. */
function companyRow(n: number, id: string, slug: string, c: CompanyColumns): object {
  return {
    n,
    id,
    slug,
    legal_name: c.legal_name,
    trade_name: c.trade_name ?? undefined,
    ein: c.ein ?? undefined,
    entity_type: c.entity_type,
    structure_type: c.structure_type ?? undefined,
    tax_election: c.tax_election ?? undefined,
    fiscal_end_month: c.fiscal_end_month,
    formation_date: c.formation_date ?? undefined,
    formation_state: c.formation_state ?? undefined,
    principal_address: c.principal_address,
    mailing_address: c.mailing_address,
    officers: c.officers,
  };
}
