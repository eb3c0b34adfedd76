import type { Db } from '../../lib/db.js';
import { cursor, dateRange, oneOf, param, type FieldProblems, type Query } from '../../lib/list-filters.js';
import * as repo from './funding-admin.repo.js';
import type { TopUpStatus } from './top-ups.repo.js';

/*
 * The operators' view of funding (FUND-27, FUND-40, FUND-41), shared by the console and the CLI: every top-up (with its
 * failure, and what disputes and refunds took back of it), every dispute, refund and won dispute of the ledger, and
 * every automatic recharge (with its attempts and failure), three lists of one filter.
 */

/**
 * Every status the operators' status filter takes, in the order money goes through them: a top-up's (pending,
 * processing, succeeded, failed, expired) and a recharge's (queued, processing, succeeded, failed). Each list keeps
 * the rows whose own status is the one chosen, so `queued` shows no top-up and `pending` no recharge (FUND-41).
 */
export const FUNDING_STATUSES: readonly (TopUpStatus | repo.RechargeStatus)[] = [
  'pending',
  'queued',
  'processing',
  'succeeded',
  'failed',
  'expired',
];
const SHOWS = ['all', 'top-ups', 'recharges', 'reversals'] as const;

/** The operators' funding filter as read from a query string, with each bad value named and not applied. */
export interface FundingView {
  filter: {
    organizationId?: string;
    environment?: 'live' | 'test';
    status?: TopUpStatus | repo.RechargeStatus;
    takenBack: boolean;
    show: (typeof SHOWS)[number];
    from?: string;
    to?: string;
  };
  problems: FieldProblems;
}

/**
 * Reads the console's (and the CLI's) filter: organization, environment, status, taken back, what to show (all,
 * top-ups, recharges or reversals), days (FUND-27, FUND-41).
 */
export function fundingFilterOf(query: Query): FundingView {
  const problems: FieldProblems = {};
  const organizationId = param(query, 'organizationId') || undefined;
  const environment = oneOf(query, 'environment', ['live', 'test'] as const, problems);
  const status = oneOf(query, 'status', FUNDING_STATUSES, problems);
  const show = oneOf(query, 'show', SHOWS, problems) ?? 'all';
  const takenBack = param(query, 'takenBack') === '1';
  return {
    filter: { organizationId, environment, status, takenBack, show, ...dateRange(query, problems) },
    problems,
  };
}

/**
 * One page of each list the filter shows (`limit` rows, newest first; `after` pages the top-ups, and a later page of
 * top-ups shows the top-ups alone), cents. The status and "taken back" filters narrow top-ups and recharges; the
 * reversals, which are what was taken back, are narrowed by organization, environment and days (FUND-41).
 * @returns the top-ups, recharges and reversals with whether more top-ups follow.
 */
export async function fundingOverview(
  db: Db,
  view: FundingView['filter'],
  limit: number,
  query: Query = {},
): Promise<{
  topUps: repo.AdminTopUpRow[];
  recharges: repo.AdminRechargeRow[];
  reversals: repo.ReversalRow[];
  next: string | null;
}> {
  const base = { ...view, limit };
  const afterId = cursor(query, 'topUp');
  const shows = (list: (typeof SHOWS)[number]) => view.show === 'all' || view.show === list;
  const [topUps, recharges, reversals] = await Promise.all([
    shows('top-ups') ? repo.listAllTopUps(db, { ...base, afterId }) : [],
    shows('recharges') && !afterId ? repo.listAllRecharges(db, base) : [],
    shows('reversals') && !afterId ? repo.listReversals(db, base) : [],
  ]);
  return {
    topUps: topUps.slice(0, limit),
    recharges: recharges.slice(0, limit),
    reversals: reversals.slice(0, limit),
    next: topUps.length > limit ? topUps[limit - 1]!.id : null,
  };
}
