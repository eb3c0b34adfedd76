import type { DeliveryStatus } from './deliveries.repo.js';

/** ±10 %: retries of many deliveries that failed together (an outage) spread out instead of arriving at once. */
const JITTER_FRACTION = 0.1;

/** True for a 2xx answer, the only success (WH-4). */
export function isSuccess(statusCode: number | null): boolean {
  return statusCode !== null && statusCode >= 200 && statusCode < 300;
}

/** `seconds` moved by up to ±10 % at random; never negative. `random` returns [0, 1). */
export function withJitter(seconds: number, random: () => number = Math.random): number {
  return Math.max(0, seconds * (1 + JITTER_FRACTION * (2 * random() - 1)));
}

/** What the attempt produced and where the delivery stands. */
export interface AttemptFacts {
  statusCode: number | null;
  error: string | null;
  /** 1 for the first try of this delivery. */
  attemptNumber: number;
  /** false for webhook.test pings and manual resends: one attempt, no retries. */
  autoRetry: boolean;
  /** WEBHOOK_RETRY_SCHEDULE in seconds: entry n-1 is the wait after failed attempt n. */
  scheduleSeconds: number[];
  /** Set when this attempt's result disabled the endpoint (410, or failing for too long). */
  endpointDisabledReason: string | null;
}

/** The delivery's next state: `retryInSeconds` is non-null only while pending. */
export interface DeliveryDecision {
  status: DeliveryStatus;
  retryInSeconds: number | null;
  failureReason: string | null;
}

/**
 * Decides a delivery's state after one attempt (WH-5, WH-6): a 2xx succeeds;
 * otherwise the delivery is retried after `scheduleSeconds[attempt - 1]` with jitter while the schedule lasts,
 * and fails when the schedule is exhausted, when it allows no retries, or when the endpoint was just disabled.
 */
export function decideDelivery(f: AttemptFacts, random: () => number = Math.random): DeliveryDecision {
  if (isSuccess(f.statusCode)) return { status: 'succeeded', retryInSeconds: null, failureReason: null };
  if (f.endpointDisabledReason)
    return { status: 'failed', retryInSeconds: null, failureReason: `Endpoint disabled: ${f.endpointDisabledReason}` };
  const wait = f.autoRetry ? f.scheduleSeconds[f.attemptNumber - 1] : undefined;
  if (wait !== undefined) return { status: 'pending', retryInSeconds: withJitter(wait, random), failureReason: null };
  const last = f.statusCode !== null ? `HTTP ${f.statusCode}` : (f.error ?? 'no response');
  const why = f.autoRetry ? `Gave up after ${f.attemptNumber} attempts` : 'The single attempt failed';
  return { status: 'failed', retryInSeconds: null, failureReason: `${why}; last result: ${last}` };
}
