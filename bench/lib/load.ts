import autocannon, { type Options, type Result } from 'autocannon';

/** What a load run measured: requests per second and latency percentiles in ms. */
export interface LoadFigures {
  rps: number;
  p50: number;
  p99: number;
  max: number;
  ok: number;
  failed: number;
}

/**
 * Runs autocannon for `seconds` with `connections` (and `overallRate` requests/s when given, for latency at a
 * fixed rate) and summarises it. Non-2xx answers and errors count as failed.
 */
export async function runLoad(options: Options & { seconds: number }): Promise<LoadFigures> {
  const r: Result = await autocannon({ timeout: 10, ...options, duration: options.seconds });
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    max: r.latency.max,
    ok: r['2xx'],
    failed: r.non2xx + r.errors + r.timeouts,
  };
}

/** The p-th percentile (0-100) of `values` (nearest rank); NaN when empty. */
export function percentile(values: number[], p: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
