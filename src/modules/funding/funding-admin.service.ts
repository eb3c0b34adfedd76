import type { Db } from '../../lib/db.js';
import { cursor, dateRange, oneOf, param, type FieldProblems, type Query } from '../../lib/list-filters.js';
import * as repo from './funding-admin.repo.js';
import type { TopUpStatus } from './top-ups.repo.js';

/*
 * The operators' view of funding (FUND-27), shared by the console and the CLI: every top-up (with its failure, and
 * what disputes and refunds took back of it) and every dispute, refund and won dispute of the ledger. Automatic
 * recharges join as a third list of the same filter when the service runs them.
 */

/** Every top-up status, in the order a top-up goes through them (the console's status filter). */
export const TOP_UP_STATUSES: readonly TopUpStatus[] = ['pending', 'processing', 'succeeded', 'failed', 'expired'];
const SHOWS = ['all', 'top-ups', 'reversals'] as const;

/** The operators' funding filter as read from a query string, with each bad value named and not applied. */
export interface FundingView {
  filter: {
    organizationId?: string;
    environment?: 'live' | 'test';
    status?: TopUpStatus;
    takenBack: boolean;
    show: (typeof SHOWS)[number];
    from?: string;
    to?: string;
  };
  problems: FieldProblems;
}

/** Reads the console's (and the CLI's) filter: organization, environment, status, taken back, what to show, days. */
export function fundingFilterOf(query: Query): FundingView {
  const problems: FieldProblems = {};
  const organizationId = param(query, 'organizationId') || undefined;
  const environment = oneOf(query, 'environment', ['live', 'test'] as const, problems);
  const status = oneOf(query, 'status', TOP_UP_STATUSES, problems);
  const show = oneOf(query, 'show', SHOWS, problems) ?? 'all';
  const takenBack = param(query, 'takenBack') === '1';
  return {
    filter: { organizationId, environment, status, takenBack, show, ...dateRange(query, problems) },
    problems,
  };
}

/**
 * One page of each list the filter shows (`limit` rows, newest first; `after` pages the top-ups), cents.
 * @returns the top-ups and reversals with whether more top-ups follow.
 */
export async function fundingOverview(
  db: Db,
  view: FundingView['filter'],
  limit: number,
  query: Query = {},
): Promise<{
  topUps: repo.AdminTopUpRow[];
  reversals: repo.ReversalRow[];
  next: string | null;
}> {
  const base = { ...view, limit };
  const afterId = cursor(query, 'topUp');
  const [topUps, reversals] = await Promise.all([
    view.show === 'reversals' ? [] : repo.listAllTopUps(db, { ...base, afterId }),
    view.show === 'top-ups' || afterId ? [] : repo.listReversals(db, base),
  ]);
  return {
    topUps: topUps.slice(0, limit),
    reversals: reversals.slice(0, limit),
    next: topUps.length > limit ? topUps[limit - 1]!.id : null,
  };
}
