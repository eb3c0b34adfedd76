import type pg from 'pg';
import { withTransaction, type Db } from '../../lib/db.js';
import { AppError, FieldErrors, ValidationError } from '../../lib/errors.js';
import { MAX_STATE_FEE_DOLLARS, requestDollarsToCents } from '../../lib/amounts.js';
import * as repo from './billing.repo.js';
import { stateFeeChange } from './billing.views.js';
import { FEE_COLUMNS, FEE_FIELDS, type FeeField } from './fee-fields.js';
import type { StateFeeRow } from './pricing.js';

export { FEE_FIELDS } from './fee-fields.js';

/** Changes to one state's schedule: fee fields in dollars (expeditedFormation null = not available). */
export type StateFeeUpdate = Partial<Record<FeeField, number | null>> & { name?: string; note?: string };

/** GET /admin/v1/state-fees and `fees list`: every state's fee row (cents), by state code; stateFeeView presents them. */
export function listStateFees(db: Db): Promise<StateFeeRow[]> {
  return repo.listStateFees(db);
}

/**
 * PUT /admin/v1/state-fees/{state} and `fees set`: changes any fee (dollars, at most two decimals) of one
 * state, records `updatedBy`/`updatedAt` and appends `{at, by, changes: {field: {from, to}}, note}` to
 * source.history (BILL-16; the changes in dollars, as stateFeeChange presents them). Orders placed afterwards use
 * the new fees. @returns the updated row (cents).
 * @throws ValidationError (nothing to change, bad amount, name over 100 or note over 1000 characters), AppError
 * not_found for an unknown state.
 */
export async function updateStateFee(
  pool: pg.Pool,
  rawState: string,
  update: StateFeeUpdate,
  actor: string,
): Promise<StateFeeRow> {
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
      if (current[col] !== cents) changes[f] = stateFeeChange(current[col], cents);
      next[col] = cents as number;
    }
    if (update.name !== undefined && update.name !== current.name)
      changes.name = { from: current.name, to: update.name };
    const entry = { at: new Date().toISOString(), by: actor, changes, ...(update.note ? { note: update.note } : {}) };
    return repo.updateStateFees(tx, state, next, entry, actor);
  });
}
