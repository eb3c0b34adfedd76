import type pg from 'pg';
import { withTransaction, type Db } from '../../lib/db.js';
import { AppError, FieldErrors, ValidationError } from '../../lib/errors.js';
import * as repo from './compliance.repo.js';
import { ruleProblems, type StateRule } from './due-date-rules.js';

/*
 * The operators' side of the compliance rules (CAL-22): reading them, changing them, and the log of every change.
 */

/** Operator view of a jurisdiction's rules. */
function ruleView(r: repo.RuleRow) {
  return {
    state: r.state,
    ...r.rule,
    dataAsOf: r.data_as_of,
    updatedAt: r.updated_at.toISOString(),
    updatedBy: r.updated_by,
  };
}

/** GET /admin/v1/compliance-rules and `compliance rules list`. */
export async function listRuleViews(db: Db) {
  return (await repo.listRules(db)).map(ruleView);
}

/** An operator's change to one jurisdiction: top-level fields replace, `llc`/`corporation` fields merge shallowly. */
export interface RuleUpdate {
  name?: string;
  confidence?: StateRule['confidence'];
  llc?: Record<string, unknown>;
  corporation?: Record<string, unknown>;
  /** CAL-24: replaces the jurisdiction's weekend and holiday rule. */
  weekendRule?: Record<string, unknown>;
  note?: string;
}

/**
 * PUT /admin/v1/compliance-rules/{state} and `compliance rules set` (CAL-22): applies the change, refuses a result
 * the calendar cannot compute, saves it and appends `{before, after, changedBy, note}` to the change log, in one
 * transaction. Calendars computed afterwards use the new rules.
 * @throws ValidationError naming the fields (nothing to change, unusable rule, name over 100 or note over 500
 * characters); AppError not_found for an unknown state.
 */
export async function updateRules(pool: pg.Pool, rawState: string, update: RuleUpdate, actor: string) {
  const state = rawState.toUpperCase();
  // LIM-2: the CLI has no request schema to bound these (the admin API's has the same bounds).
  new FieldErrors().maxLength('name', update.name, 100).maxLength('note', update.note, 500).throwIfAny();
  if (
    update.name === undefined &&
    update.confidence === undefined &&
    update.llc === undefined &&
    update.corporation === undefined &&
    update.weekendRule === undefined
  ) {
    throw new ValidationError([
      { field: 'llc', message: 'give at least one of: name, confidence, llc, corporation, weekendRule' },
    ]);
  }
  return withTransaction(pool, async (tx) => {
    const current = await repo.findRule(tx, state, true);
    if (!current) throw new AppError('not_found', `No compliance rules for jurisdiction '${state}'`);
    const before = current.rule;
    const after = {
      ...before,
      ...(update.name !== undefined ? { name: update.name } : {}),
      ...(update.confidence !== undefined ? { confidence: update.confidence } : {}),
      ...(update.weekendRule !== undefined ? { weekendRule: update.weekendRule } : {}),
      llc: { ...before.llc, ...(update.llc ?? {}) },
      corporation: { ...before.corporation, ...(update.corporation ?? {}) },
    } as StateRule;
    const problems = ruleProblems(after);
    if (problems.length) throw new ValidationError(problems);
    return ruleView(await repo.updateRule(tx, state, before, after, actor, update.note ?? null));
  });
}

/** GET /admin/v1/compliance-rules/changes and `compliance rules history`: who changed what, newest first. */
export async function listRuleChangeViews(db: Db, state: string | null, limit = 50) {
  return (await repo.listRuleChanges(db, state ? state.toUpperCase() : null, limit)).map((c) => ({
    id: c.id,
    state: c.state,
    changedAt: c.changed_at.toISOString(),
    changedBy: c.changed_by,
    note: c.note,
    before: c.before,
    after: c.after,
  }));
}
