/**
 * Bench section `scale`: the hot paths at 1,000 orders and again at 1,000,000 (BENCH_SCALE_ORDERS), across 1,000
 * tenants, with each order's status history, ledger debit, event and webhook delivery. The rows are seeded with
 * set-based SQL (generate_series), not the API. The measured tenant is one of the 1,000 and grows with the rest.
 * The two sizes are two databases, each with its service, timed in alternating windows (see `benchScale`).
 * Measured: p99 of POST /orders, GET /companies/{id}, GET /events, GET /balance-transactions and
 * GET /webhook-deliveries (pages of 100), each at a fixed rate below saturation (READ_RATE, PAGE_RATE, ORDER_RATE), and the
 * console's queue page (its list, tab counts and filter menus, in this process).
 * Target: p99 at the large size within 20 % of the small size. Prints the plan of each hot query at both sizes.
 */
import pg from 'pg';
import { Pool } from 'undici';
import type { Tenant } from '../src/context.js';
import { countQueue, listQueue, queueFacets } from '../src/modules/console/queue.repo.js';
import type { BenchSection } from './run.js';
import { startChild } from './lib/child.js';
import { addWindow, emptySide, type PacedRequest, percentile, runPaced, windowP99Text } from './lib/load.js';
import { record } from './lib/report.js';
import { createBenchTenant } from './lib/tenant.js';
import { formationBody } from './orders.js';

const TENANTS = 1000;
const ORDERS_PER_GROUP = 10;
const SEED_BATCH = 100_000;
/**
 * Offered rates (requests/s) of the timed paths on EACH size, both sizes loaded at once, together well below what a
 * path sustains on a 2-core machine: a read by key, a page of 100 (serializing 100 items costs far more than finding
 * them), a placement.
 */
const READ_RATE = 250;
const PAGE_RATE = 50;
const ORDER_RATE = 100;
const DEBIT_CENTS = 5000;

export const benchScale: BenchSection = async (db, settings) => {
  const large = Math.max(10_000, Number(process.env.BENCH_SCALE_ORDERS ?? 1_000_000));
  // Both sizes exist side by side, each in its own database served by its own process, and every path is timed on
  // both at once, the same offered rate on each. A shared machine that stalls or drifts during the run then moves
  // both sizes alike, so the ratio compares the data, not the moment.
  const sides: Side[] = [];
  try {
    sides.push(await prepareSide(db, settings, TENANTS, 'small'));
    sides.push(await prepareSide(db, settings, large, 'large'));
    const p99 = await measureSides(sides, settings);
    for (const side of sides) await printPlans(side.pool, side.tenant, side.company, side.label);
    const [small, big] = sides as [Side, Side];
    for (const name of Object.keys(p99)) {
      const [p99Small, p99Large] = p99[name]!;
      record({
        section: 'scale',
        name: `${name} p99 at ${small.orders.toLocaleString('en-US')} orders`,
        value: p99Small!,
        unit: 'ms',
      });
      record({
        section: 'scale',
        name: `${name} p99 at ${big.orders.toLocaleString('en-US')} orders`,
        value: p99Large!,
        unit: 'ms',
        baseline: { name: `p99 at ${small.orders.toLocaleString('en-US')} orders`, value: p99Small! },
        target: '<= 120 % of the small size',
        pass: p99Large! <= p99Small! * 1.2,
      });
    }
  } finally {
    for (const side of sides) {
      await side.http.close();
      await side.pool.end();
      await side.server.stop();
    }
  }
};

/** One size: its database (seeded), the service on it, and what the timed requests need. */
interface Side {
  label: string;
  orders: number;
  pool: pg.Pool;
  server: Awaited<ReturnType<typeof startChild>>;
  http: Pool;
  headers: Record<string, string>;
  tenant: Tenant;
  userId: string;
  company: string;
  /** Formations placed so far on this side (each gets its own company name). */
  placed: number;
}

/**
 * A fresh database with 1,000 tenants and `orders` orders, vacuumed and checkpointed (measured as a database in
 * service is: visibility map set, the seeding's dirty pages written), and the service started on it.
 */
async function prepareSide(
  db: Parameters<BenchSection>[0],
  settings: { connections: number },
  orders: number,
  label: string,
): Promise<Side> {
  const url = await db.another(`scale_${label}`);
  const server = await startChild('app-server.ts', {
    DATABASE_URL: url,
    DATABASE_POOL_SIZE: String(settings.connections),
  });
  const pool = new pg.Pool({ connectionString: url, max: 3 });
  const { tenant, headers, userId } = await createBenchTenant(pool, server.url, 'Bench Scale Org', 100_000_000_000);
  await seedTenants(pool, tenant.organizationId);
  const started = Date.now();
  for (let i = 0; i < orders; i += SEED_BATCH) await seedOrders(pool, i, Math.min(orders, i + SEED_BATCH));
  await pool.query('VACUUM ANALYZE');
  await pool.query('CHECKPOINT');
  process.stdout.write(
    `  scale: ${orders.toLocaleString('en-US')} orders seeded in ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
  );
  const company = (
    await pool.query('SELECT id FROM companies WHERE organization_id = $1 ORDER BY id LIMIT 1', [tenant.organizationId])
  ).rows[0].id as string;
  // Room for a slow answer without queueing the paced requests behind it.
  const http = new Pool(server.url, { connections: 32 });
  return { label, orders, pool, server, http, headers, tenant, userId, company, placed: 0 };
}

/**
 * Times every hot path on every side: each path at a fixed rate well below what it sustains (an open loop,
 * runPaced), so its p99 is the cost of one request at that size, not a queue behind the load generator. After an
 * untimed second, three windows in which every side is loaded at once; a side's figure is the p99 of all its
 * windows' requests together. Measured one side after the other (alternating windows), this machine's stalls of
 * tens of ms at random moments decided which size "won": window p99s of one path and size ranged from 2.6 to 62 ms.
 * @returns p99 in ms by path, one per side, in the order of `sides`.
 */
async function measureSides(sides: Side[], settings: { seconds: number }): Promise<Record<string, number[]>> {
  const seconds = Math.max(3, settings.seconds / 2);
  const windows = async (name: string, time: (side: Side, seconds: number) => Promise<number[]>) => {
    // An untimed second first: the first requests of a path pay for compiling its code and plans.
    await Promise.all(sides.map((side) => time(side, 1)));
    const pooled = sides.map(emptySide);
    for (let w = 0; w < 3; w++) {
      const latencies = await Promise.all(sides.map((side) => time(side, seconds)));
      for (const [i, l] of latencies.entries()) addWindow(pooled[i]!, l);
    }
    // Every window's p99, so a reader sees how much the machine itself moved them.
    const shown = sides.map((side, i) => `${side.label} ${windowP99Text(pooled[i]!)}`);
    process.stdout.write(`  scale: ${name} p99 of each window (ms): ${shown.join('; ')}\n`);
    return pooled.map((side) => percentile(side.latencies, 99));
  };
  const paced = (rate: number, next: (side: Side) => PacedRequest) => async (side: Side, secs: number) =>
    (await runPaced({ pool: side.http, rate, seconds: secs, next: () => next(side) })).latencies;
  const get = (path: (side: Side) => string) => (side: Side) => ({
    method: 'GET' as const,
    path: path(side),
    headers: side.headers,
  });
  const formation = (side: Side) => {
    side.placed += 1;
    return {
      method: 'POST' as const,
      path: '/test/v1/orders',
      headers: side.headers,
      body: JSON.stringify(formationBody(side.userId, `Scale ${side.label} ${side.placed} LLC`)),
    };
  };
  const paths: Array<[string, (side: Side, secs: number) => Promise<number[]>]> = [
    ['POST /orders', paced(ORDER_RATE, formation)],
    [
      'GET /companies/{id}',
      paced(
        READ_RATE,
        get((side) => `/test/v1/companies/${side.company}`),
      ),
    ],
    [
      'GET /events',
      paced(
        PAGE_RATE,
        get(() => '/test/v1/events?limit=100'),
      ),
    ],
    [
      'GET /balance-transactions',
      paced(
        PAGE_RATE,
        get(() => '/test/v1/balance-transactions?limit=100'),
      ),
    ],
    [
      'GET /webhook-deliveries',
      paced(
        PAGE_RATE,
        get(() => '/test/v1/webhook-deliveries?limit=100'),
      ),
    ],
    ['console queue page', (side, secs) => queuePageLatencies(side.pool, secs)],
  ];
  const out: Record<string, number[]> = {};
  for (const [name, time] of paths) out[name] = await windows(name, time);
  return out;
}

/**
 * The console queue page's queries (first page of 50, the tab counts, the filter menus), run together one page after
 * another for `seconds`. @returns each page's latency in ms.
 */
async function queuePageLatencies(pool: pg.Pool, seconds: number): Promise<number[]> {
  const filter = {
    environment: 'test' as const,
    status: '' as const,
    state: '',
    orderType: '',
    organizationId: '',
    q: '',
  };
  const times: number[] = [];
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    const t0 = performance.now();
    await Promise.all([listQueue(pool, filter, 50), countQueue(pool, filter), queueFacets(pool)]);
    times.push(performance.now() - t0);
  }
  return times;
}

/** EXPLAIN ANALYZE of each hot read, as the service sends it, so a scan of a large table shows. */
async function printPlans(pool: pg.Pool, tenant: Tenant, companyId: string, label: string): Promise<void> {
  const t = [tenant.organizationId, tenant.environment];
  const queries: Array<[string, string, unknown[]]> = [
    [
      'GET /companies/{id}',
      'SELECT * FROM companies WHERE id = $1 AND organization_id = $2 AND environment = $3',
      [companyId, ...t],
    ],
    [
      'GET /events',
      'SELECT id, type, data, created_at FROM events WHERE organization_id = $1 AND environment = $2 ORDER BY id DESC LIMIT 101',
      t,
    ],
    [
      'GET /balance-transactions',
      'SELECT * FROM ledger_entries WHERE organization_id = $1 AND environment = $2 AND ($3::text IS NULL OR id < $3) ORDER BY id DESC LIMIT 101',
      [...t, null],
    ],
    [
      'GET /webhook-deliveries',
      `SELECT d.id, e.type FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
       WHERE d.organization_id = $1 AND d.environment = $2 AND ($3::text IS NULL OR d.endpoint_id = $3) AND ($4::text IS NULL OR d.event_id = $4)
         AND ($5::text IS NULL OR d.status = $5) AND ($6::text IS NULL OR d.id < $6) ORDER BY d.id DESC LIMIT 101`,
      [...t, null, null, null, null],
    ],
    [
      'POST /orders: balance debit lock',
      'SELECT balance_cents, last_entry_id FROM balances WHERE organization_id = $1 AND environment = $2',
      t,
    ],
  ];
  const filter = {
    environment: 'test' as const,
    status: '' as const,
    state: '',
    orderType: '',
    organizationId: '',
    q: '',
  };
  const captured: Array<[string, string, unknown[]]> = [];
  const capture = {
    query: (sql: string, params: unknown[]) => {
      captured.push(['console queue', sql, params]);
      return Promise.resolve({ rows: [] });
    },
  };
  await listQueue(capture as never, filter, 50);
  await countQueue(capture as never, filter);
  await queueFacets(capture as never);
  for (const [name, sql, params] of [...queries, ...captured]) {
    const { rows } = await pool.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) ${sql}`, params);
    process.stdout.write(`\n  plan (${label}) ${name}:\n${rows.map((r) => `    ${r['QUERY PLAN']}`).join('\n')}\n`);
  }
}

/** 999 more tenants beside the measured one, each with a user, 10 companies, a webhook endpoint and a credit. */
async function seedTenants(pool: pg.Pool, measuredOrg: string): Promise<void> {
  await pool.query(
    `WITH t AS (SELECT g AS n, CASE WHEN g = 0 THEN $1 ELSE 'org_00s' || lpad(g::text, 23, '0') END AS org FROM generate_series(0, ${TENANTS - 1}) g),
     orgs AS (INSERT INTO organizations (id, name) SELECT org, 'Scale tenant ' || n FROM t WHERE n > 0 RETURNING id),
     bal AS (INSERT INTO balances (organization_id, environment) SELECT id, e FROM orgs, (VALUES ('live'), ('test')) v(e) RETURNING 1),
     users AS (INSERT INTO users (id, organization_id, environment, full_name, email, email_normalized)
               SELECT 'user_00s' || lpad(n::text, 22, '0'), org, 'test', 'Scale User', 'u' || n || '@example.com', 'u' || n || '@example.com' FROM t RETURNING 1),
     companies AS (INSERT INTO companies (id, organization_id, environment, slug, legal_name, entity_type, structure_type, formation_state, principal_address, mailing_address)
               SELECT 'comp_00s' || lpad((n * 10 + k)::text, 22, '0'), org, 'test', 'scale-' || n || '-' || k, 'Scale ' || n || '-' || k || ' LLC', 'LLC', 'MEMBER', 'DE',
                      '{"line1":"1 Main St","city":"Dover","state":"DE","postalCode":"19901","country":"US"}', '{"line1":"1 Main St","city":"Dover","state":"DE","postalCode":"19901","country":"US"}'
                 FROM t, generate_series(0, 9) k RETURNING 1)
     INSERT INTO webhook_endpoints (id, organization_id, environment, url, event_types, secret)
     SELECT 'we_00s' || lpad(n::text, 24, '0'), org, 'test', 'https://hooks.example.com/' || n, ARRAY['filing.status_changed'], 'whsec_scale_not_used' FROM t`,
    [measuredOrg],
  );
}

/**
 * Orders [from, to): 10 orders per order group, groups spread round-robin over the tenants. Every order gets its
 * `submitted` history row, one ledger debit, one event and one delivery (already succeeded). Orders beyond the first
 * 1,000 are filed, as old orders are: the filing queue stays the size of the team's work, not of the history.
 * The tenants' balances are then set to their ledger sums. Ids sort before any id the service makes.
 */
async function seedOrders(pool: pg.Pool, from: number, to: number): Promise<void> {
  const orgOf = (g: string) =>
    `CASE WHEN (${g}) % ${TENANTS} = 0 THEN $3 ELSE 'org_00s' || lpad(((${g}) % ${TENANTS})::text, 23, '0') END`;
  const measured = (
    await pool.query(`SELECT id FROM organizations WHERE id NOT LIKE 'org_00s%' ORDER BY created_at LIMIT 1`)
  ).rows[0].id as string;
  await pool.query(
    `WITH o AS (
       SELECT i, i / ${ORDERS_PER_GROUP} AS g, lpad(i::text, 23, '0') AS sfx, ${orgOf(`i / ${ORDERS_PER_GROUP}`)} AS org,
              ((i / ${ORDERS_PER_GROUP}) % ${TENANTS}) AS t
         FROM generate_series($1::bigint, $2::bigint - 1) i
     ), groups AS (
       INSERT INTO order_groups (id, organization_id, environment, user_id, company_id, filing_state, source, billing, request, total_cents)
       SELECT DISTINCT ON (g) 'ordgrp_0s' || lpad(g::text, 23, '0'), org, 'test', 'user_00s' || lpad(t::text, 22, '0'),
              'comp_00s' || lpad((t * 10 + g % 10)::text, 22, '0'), 'DE', 'api', 'balance', '{}', ${DEBIT_CENTS * ORDERS_PER_GROUP}
         FROM o ORDER BY g RETURNING 1
     ), orders AS (
       INSERT INTO orders (id, organization_id, environment, group_id, company_id, user_id, order_type, filing_state, filing_status, billing, amount_cents, details)
       SELECT 'order_00s' || sfx, org, 'test', 'ordgrp_0s' || lpad(g::text, 23, '0'), 'comp_00s' || lpad((t * 10 + g % 10)::text, 22, '0'),
              'user_00s' || lpad(t::text, 22, '0'), 'annual_report', 'DE', CASE WHEN i < ${TENANTS} THEN 'submitted' ELSE 'filed' END, 'balance', ${DEBIT_CENTS}, '{}'
         FROM o RETURNING 1
     ), history AS (
       INSERT INTO order_status_history (id, order_id, organization_id, environment, from_status, to_status, actor)
       SELECT 'fsc_00s' || sfx, 'order_00s' || sfx, org, 'test', NULL, 'submitted', 'api' FROM o RETURNING 1
     ), ledger AS (
       INSERT INTO ledger_entries (id, organization_id, environment, type, amount_cents, balance_after_cents, line_type, description, order_id, created_by)
       SELECT 'txn_00s' || sfx, org, 'test', 'debit', -${DEBIT_CENTS}, 0, 'annual_report', 'Annual report (seeded)', 'order_00s' || sfx, 'bench' FROM o RETURNING 1
     ), events AS (
       INSERT INTO events (id, organization_id, environment, type, data)
       SELECT 'evt_00s' || sfx, org, 'test', 'filing.status_changed',
              jsonb_build_object('orderId', 'order_00s' || sfx, 'orderType', 'annual_report', 'filingStatus', 'submitted') FROM o RETURNING 1
     )
     INSERT INTO webhook_deliveries (id, organization_id, environment, endpoint_id, event_id, status, attempt_count)
     SELECT 'wd_00s' || lpad(i::text, 24, '0'), org, 'test', 'we_00s' || lpad(t::text, 24, '0'), 'evt_00s' || sfx, 'succeeded', 1 FROM o`,
    [from, to, measured],
  );
  // Seeded debits are paid by a matching seeded credit, so every balance stays the sum of its ledger.
  await pool.query(
    `INSERT INTO ledger_entries (id, organization_id, environment, type, amount_cents, balance_after_cents, description, created_by)
     SELECT 'txn_00c' || lpad($1::text, 13, '0') || lpad(t::text, 10, '0'), org, 'test', 'credit', n * ${DEBIT_CENTS}, 0, 'Seed credit', 'bench'
       FROM (SELECT (i / ${ORDERS_PER_GROUP}) % ${TENANTS} AS t, ${orgOf(`i / ${ORDERS_PER_GROUP}`)} AS org, count(*) AS n
               FROM generate_series($1::bigint, $2::bigint - 1) i GROUP BY 1, 2) s`,
    [from, to, measured],
  );
}
