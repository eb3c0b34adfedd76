/**
 * `npm run bench`: every hot path of the service measured against bare baselines run in the same invocation on
 * the same machine, printed as ratios. Sections run in order; `BENCH_ONLY=orders,webhooks` picks some.
 * Settings: BENCH_SECONDS (default 10, per load scenario), BENCH_CONNECTIONS (default 10), DATABASE_URL
 * (a server to make throw-away databases on; default: an embedded PostgreSQL in `.data/bench-pg`).
 * Exits 1 when a figure misses its target or a consistency check (ledger sums) fails.
 */
import os from 'node:os';
import { measureBaselines, type Baselines, type BenchSettings } from './baseline.js';
import { openBenchDatabase, type BenchDatabase } from './lib/database.js';
import { printReport } from './lib/report.js';
import { benchOrders } from './orders.js';
import { benchPortal } from './portal.js';
import { benchReads } from './reads.js';
import { benchScale } from './scale.js';
import { benchSignin } from './signin.js';
import { benchWebhooks } from './webhooks.js';

/** One part of the bench: it gets a database server to make its own databases on, the settings and the baselines. */
export type BenchSection = (db: BenchDatabase, settings: BenchSettings, baselines: Baselines) => Promise<void>;

const SECTIONS: Record<string, BenchSection> = {
  orders: benchOrders,
  portal: benchPortal,
  reads: benchReads,
  scale: benchScale,
  signin: benchSignin,
  webhooks: benchWebhooks,
};

async function main(): Promise<void> {
  const settings: BenchSettings = {
    seconds: Math.max(1, Math.min(Number(process.env.BENCH_SECONDS ?? 10), 60)),
    connections: Math.max(1, Math.min(Number(process.env.BENCH_CONNECTIONS ?? 10), 100)),
  };
  const only = process.env.BENCH_ONLY?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const db = await openBenchDatabase();
  let ok = true;
  try {
    process.stdout.write(`Bench: ${settings.connections} connections, ${settings.seconds} s per scenario\n`);
    const baselines = await measureBaselines(db.url, settings);
    try {
      for (const [name, section] of Object.entries(SECTIONS)) {
        if (only && !only.includes(name)) continue;
        process.stdout.write(`\n== ${name}\n`);
        await db.settle();
        await section(db, settings, baselines);
      }
    } finally {
      await baselines.close();
    }
  } finally {
    ok = printReport(
      `${os.cpus().length} x ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}`,
    );
    await db.close();
  }
  if (!ok) process.exitCode = 1;
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
