import type { WorkerEvents } from 'graphile-worker';
import type pg from 'pg';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The process's Prometheus metrics (prom-client), served as text by `GET /metrics` (operator token) and, when
 * METRICS_PORT is set, on that port without authentication. Modules add their own metrics to {@link registry}
 * (webhook backlog, delivery attempts, job failures, ledger check) next to the code that measures them.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

/** Duration of every HTTP request in seconds, by method, route pattern (not the raw URL) and status code. */
export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request duration in seconds, by method, route pattern and status code',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

const pools = new Map<string, pg.Pool>();

/** Reports a connection pool's use under `name` (`api`, `worker`): total, idle and waiting clients. */
export function observePool(name: string, pool: pg.Pool): void {
  pools.set(name, pool);
}

new Gauge({
  name: 'db_pool_clients',
  help: 'Database pool clients by pool and state (total, idle, waiting requests)',
  labelNames: ['pool', 'state'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const [name, pool] of pools) {
      this.set({ pool: name, state: 'total' }, pool.totalCount);
      this.set({ pool: name, state: 'idle' }, pool.idleCount);
      this.set({ pool: name, state: 'waiting' }, pool.waitingCount);
    }
  },
});

/**
 * Failed job attempts of the background worker, by task and whether graphile-worker will retry the job
 * (`will_retry="false"`: its attempts are used up and it stays failed until someone acts).
 */
const jobFailures = new Counter({
  name: 'worker_job_failures_total',
  help: 'Failed background job attempts, by task and whether the job will be retried',
  labelNames: ['task', 'will_retry'] as const,
  registers: [registry],
});

/** Counts every failed job attempt reported on a graphile-worker runner's `events` in {@link jobFailures}. */
export function observeJobFailures(events: WorkerEvents): void {
  events.on('job:error', ({ job }) => {
    // `attempts` already counts the attempt that just failed.
    jobFailures.inc({ task: job.task_identifier, will_retry: String(job.attempts < job.max_attempts) });
  });
}
