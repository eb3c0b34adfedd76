import type pg from 'pg';
import { withTransaction, type Db } from '../../lib/db.js';
import { AppError, FieldErrors, ValidationError } from '../../lib/errors.js';
import { centsToDollars } from '../../lib/money.js';
import { MAX_STATE_FEE_DOLLARS, requestDollarsToCents } from './amounts.js';
import * as repo from './billing.repo.js';
import type { StateFeeRow } from './pricing.js';

/** The API fee field (dollars) -> its state_fees column (cents). */
const FEE_COLUMNS = {
  llcFormation: 'llc_formation_cents',
  corpFormation: 'corp_formation_cents',
  llcForeignQualification: 'llc_foreign_cents',
  corpForeignQualification: 'corp_foreign_cents',
  llcAnnualReport: 'llc_annual_report_cents',
  corpAnnualReport: 'corp_annual_report_cents',
  expeditedFormation: 'expedited_formation_cents',
} as const;

/** A fee field of the operator API and CLI (dollars), e.g. `llcFormation`. */
export type FeeField = keyof typeof FEE_COLUMNS;
/** Every fee field, in schedule order. */
export const FEE_FIELDS = Object.keys(FEE_COLUMNS) as FeeField[];

/** Changes to one state's schedule: fee fields in dollars (expeditedFormation null = not available). */
export type StateFeeUpdate = Partial<Record<FeeField, number | null>> & { name?: string; note?: string };

/** Operator view of a schedule row: fees in dollars plus provenance. */
export function stateFeeView(r: StateFeeRow) {
  const fees = Object.fromEntries(
    FEE_FIELDS.map((f) => {
      const cents = r[FEE_COLUMNS[f]];
      return [f, cents === null ? null : centsToDollars(cents)];
    }),
  ) as Record<FeeField, number | null>;
  return {
    state: r.state,
    name: r.name,
    ...fees,
    source: r.source,
    updatedAt: r.updated_at.toISOString(),
    updatedBy: r.updated_by,
  };
}

/** GET /admin/v1/state-fees and `fees list`: every state's fees, by state code. */
export async function listStateFeeViews(db: Db) {
  return (await repo.listStateFees(db)).map(stateFeeView);
}

/**
 * PUT /admin/v1/state-fees/{state} and `fees set`: changes any fee (dollars, at most two decimals) of one
 * state, records `updatedBy`/`updatedAt` and appends `{at, by, changes: {field: {from, to}}, note}` to
 * source.history (BILL-16). Orders placed afterwards use the new fees.
 * @throws ValidationError (nothing to change, bad amount, name over 100 or note over 1000 characters), AppError
 * not_found for an unknown state.
 */
export async function updateStateFee(pool: pg.Pool, rawState: string, update: StateFeeUpdate, actor: string) {
  const state = rawState.toUpperCase();
  const given = FEE_FIELDS.filter((f) => update[f] !== undefined);
  // LIM-2: the console and the CLI have no request schema to bound these.
  new FieldErrors().maxLength('name', update.name, 100).maxLength('note', update.note, 1000).throwIfAny();
  if (!given.length && update.name === undefined) {
    throw new ValidationError([
      { field: 'llcFormation', message: `give at least one of: name, ${FEE_FIELDS.join(', ')}` },
    ]);
  }
  const newCents = new Map<FeeField, number | null>();
  for (const f of given) {
    const v = update[f];
    if (v === null && f !== 'expeditedFormation')
      throw new ValidationError([{ field: f, message: 'must be a number of dollars' }]);
    newCents.set(f, v === null || v === undefined ? null : requestDollarsToCents(f, v, { max: MAX_STATE_FEE_DOLLARS }));
  }
  return withTransaction(pool, async (tx) => {
    const current = await repo.findStateFeesForUpdate(tx, state);
    if (!current) throw new AppError('not_found', `No fee schedule for state '${state}'`);
    const next: repo.StateFeeColumns = { ...current, name: update.name ?? current.name };
    const changes: Record<string, { from: number | string | null; to: number | string | null }> = {};
    for (const [f, cents] of newCents) {
      const col = FEE_COLUMNS[f];
      if (current[col] !== cents) changes[f] = { from: dollarsOrNull(current[col]), to: dollarsOrNull(cents) };
      next[col] = cents as number;
    }
    if (update.name !== undefined && update.name !== current.name)
      changes.name = { from: current.name, to: update.name };
    const entry = { at: new Date().toISOString(), by: actor, changes, ...(update.note ? { note: update.note } : {}) };
    return stateFeeView(await repo.updateStateFees(tx, state, next, entry, actor));
  });
}

const dollarsOrNull = (cents: number | null) => (cents === null ? null : centsToDollars(cents));
