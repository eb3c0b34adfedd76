import autocannon, { type Options, type Result } from 'autocannon';
import type { Pool } from 'undici';

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
 * Runs autocannon for `seconds` with `connections` and summarises it: throughput with a closed loop (each connection
 * sends its next request when the last is answered). Non-2xx answers and errors count as failed. For latency at a
 * given rate use {@link runPaced}: autocannon's `overallRate` lets each connection send its whole second's share at
 * once at the start of every second, so its percentiles measure the queue behind that burst, not the service.
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

/** One request of a paced run: method, path (appended to the base URL), headers and body. */
export interface PacedRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * An open-loop load at a fixed rate: request i is due at start + i / `rate` seconds whatever the answers so far
 * (evenly spaced, as independent clients arrive), for `seconds`, through `pool` (an undici Pool of keep-alive
 * connections to the server, kept by the caller across runs so that a run does not time its own connecting). Each
 * latency is measured from the moment the request was due, so a generator or a server that falls behind shows in
 * the figures instead of hiding (no coordinated omission). `next(i)` gives request i.
 * @returns rps achieved, p50/p99/max latency in ms, answered 2xx/3xx (ok) and the rest (failed), and every latency
 * (ms, in order of answer) for pooling several runs' percentiles.
 */
export async function runPaced(options: {
  pool: Pool;
  rate: number;
  seconds: number;
  next: (i: number) => PacedRequest;
}): Promise<LoadFigures & { latencies: number[] }> {
  const { pool } = options;
  const total = Math.round(options.rate * options.seconds);
  const latencies: number[] = [];
  let ok = 0;
  let failed = 0;
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  const send = async (i: number, due: number) => {
    const r = options.next(i);
    try {
      const res = await pool.request({ method: r.method, path: r.path, headers: r.headers, body: r.body });
      await res.body.dump();
      if (res.statusCode < 400) ok += 1;
      else failed += 1;
    } catch {
      failed += 1;
    }
    latencies.push(performance.now() - due);
  };
  let sent = 0;
  while (sent < total) {
    const now = performance.now();
    const dueNow = Math.min(total, Math.floor(((now - started) / 1000) * options.rate) + 1);
    for (; sent < dueNow; sent++) inFlight.push(send(sent, started + (sent * 1000) / options.rate));
    const nextDue = started + (sent * 1000) / options.rate;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, nextDue - performance.now())));
  }
  await Promise.all(inFlight);
  const elapsed = (performance.now() - started) / 1000;
  return {
    rps: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: Math.max(...latencies),
    ok,
    failed,
    latencies,
  };
}

/** One side of {@link alternateWindows}: every latency of its windows (ms) and each window's p99. */
export interface PooledSide {
  latencies: number[];
  windowP99s: number[];
}

/**
 * Compares conditions that cannot run at once (a path alone and under attack, say) on a machine whose speed drifts:
 * runs one window of each side in turn (a, b, a, b, ...), `windows` times, each `run` returning its window's
 * latencies in ms, and pools every side's latencies so its p99 is taken over all of its windows.
 * @returns one PooledSide per entry of `sides`, in order.
 */
export async function alternateWindows(windows: number, sides: Array<() => Promise<number[]>>): Promise<PooledSide[]> {
  const pooled = sides.map(emptySide);
  for (let w = 0; w < windows; w++) {
    for (const [i, run] of sides.entries()) addWindow(pooled[i]!, await run());
  }
  return pooled;
}

/** A side with no window yet. */
export function emptySide(): PooledSide {
  return { latencies: [], windowP99s: [] };
}

/** Adds one window's latencies (ms) to `side`: pooled with the others, and its own p99 kept. */
export function addWindow(side: PooledSide, latencies: number[]): void {
  for (const ms of latencies) side.latencies.push(ms);
  side.windowP99s.push(percentile(latencies, 99));
}

/** A side's window p99s for printing, e.g. "12.3, 9.8, 15.0" (ms). */
export function windowP99Text(side: PooledSide): string {
  return side.windowP99s.map((v) => v.toFixed(1)).join(', ');
}
