/**
 * Bench section `orders`: POST /orders/quote (read-only pricing) and POST /orders (each request forms a
 * differently named LLC with an EIN and a registered agent: company, order group, three orders, ledger debits,
 * status history, events) at full load, at a fixed rate and on one connection, on a fresh
 * database, the service in its own process, against the one-INSERT baseline (for POST /orders, in windows that
 * alternate with the baseline's, see `alternating`), then where the placement statement's time goes in the database
 * at full load (`sampleStatementStates`). Ends with a check that the ledger still sums to the cached balance.
 */
import os from 'node:os';
import pg from 'pg';
import { Pool } from 'undici';
import type { Tenant } from '../src/context.js';
import { type Alternated, alternating, type Baselines, type BenchSettings, WARM_UP_SECONDS } from './baseline.js';
import type { CpuSpent } from './lib/cpu-usage.js';
import type { BenchSection } from './run.js';
import { startChild } from './lib/child.js';
import { runLoad, runPaced } from './lib/load.js';
import { sampleStatementStates, type StatementStates } from './lib/statement-states.js';
import { record } from './lib/report.js';
import { createBenchTenant } from './lib/tenant.js';

export const benchOrders: BenchSection = async (db, settings, baselines) => {
  const url = await db.another('orders');
  const server = await startChild('app-server.ts', {
    DATABASE_URL: url,
    DATABASE_POOL_SIZE: String(settings.connections),
  });
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  try {
    // $1,000,000,000: on a fast machine the section places over 40,000 orders of $269, and a balance that runs out
    // turns the rest into 402s, each batch then written again one placement at a time (ORD-17).
    const { tenant, headers, userId } = await createBenchTenant(pool, server.url, 'Bench Org', 100_000_000_000);
    const template = formationBody(userId);
    // Each request forms a differently named company, as real traffic would (equal names would contend on the slug
    // index). The body around the name is serialised once: the load generator shares the machine with the service,
    // so each request's body costs it a string concatenation, not the building and serialising of a new object.
    const [before, after] = bodyAround(userId);
    let n = 0;
    const fresh = (request: { body?: string }) => {
      n += 1;
      return { ...request, body: `${before}"Bench ${n} Holdings LLC"${after}` };
    };
    const common = {
      method: 'POST',
      headers,
      body: JSON.stringify(template),
      connections: settings.connections,
      seconds: settings.seconds,
      requests: [{ setupRequest: fresh }],
    };
    const quote = await runLoad({ ...common, url: `${server.url}/test/v1/orders/quote` });
    record({
      section: 'orders',
      name: 'POST /orders/quote',
      value: quote.rps,
      unit: 'req/s',
      baseline: { name: 'INSERT baseline', value: baselines.insert.rps },
    });
    // Warm, as the baseline's server is by then: the placement path's code optimised under load, and the tables past
    // the first automatic ANALYZEs that an empty table sets off every few hundred rows.
    await runLoad({ ...common, seconds: WARM_UP_SECONDS, url: `${server.url}/test/v1/orders` });
    // The INSERT baseline's windows write to the same server: the database's work is counted over the orders' own.
    const work = { walBytes: 0n, nextXid: 0n, groups: 0 };
    const place = await alternating(
      baselines,
      'insert',
      settings.seconds,
      async (seconds) => {
        const before = await databaseWork(pool);
        const figures = await runLoad({ ...common, seconds, url: `${server.url}/test/v1/orders` });
        const after = await databaseWork(pool);
        work.walBytes += after.walBytes - before.walBytes;
        work.nextXid += after.nextXid - before.nextXid;
        work.groups += after.groups - before.groups;
        return figures;
      },
      server.process.pid,
    );
    record({
      section: 'orders',
      name: 'POST /orders',
      value: place.rps,
      unit: 'req/s',
      baseline: { name: 'INSERT baseline beside it', value: place.baselineRps },
      target: '>= 40 % of INSERT baseline',
      pass: place.rps / place.baselineRps >= 0.4 && place.failed === 0,
    });
    record({ section: 'orders', name: 'POST /orders p99', value: place.p99, unit: 'ms' });
    if (place.cpu) recordCpu(place.cpu);
    recordDatabaseWork(work);
    await recordCommitsPerOrder(pool, [tenant], 'POST /orders');
    // Where the placement statement's time goes at full load, in a window of its own (sampling costs a query a time).
    const states = await sampleStatementStates(
      pool,
      'SELECT place_order_groups',
      2,
      runLoad({ ...common, seconds: STATES_SECONDS, url: `${server.url}/test/v1/orders` }),
    );
    recordStatementStates(states);
    // Alone on one connection, then at half the INSERT-baseline share the target asks for (requests arriving evenly
    // at that rate, whatever the answers: an open loop). Alone first: an offered rate above what one tenant can place
    // leaves a queue behind it that the next scenario would time.
    const alone = await runLoad({ ...common, connections: 1, url: `${server.url}/test/v1/orders` });
    record({
      section: 'orders',
      name: 'POST /orders p50, 1 connection',
      value: alone.p50,
      unit: 'ms',
      target: '<= 3 ms',
      pass: alone.p50 <= 3 && alone.failed === 0,
    });
    const halfRate = Math.max(1, Math.round((place.baselineRps * 0.4) / 2));
    const http = new Pool(server.url, { connections: 64 });
    const pacedAt = (seconds: number) =>
      runPaced({
        pool: http,
        rate: halfRate,
        seconds,
        next: () => ({ method: 'POST', path: '/test/v1/orders', headers, body: fresh({}).body }),
      });
    // The full-load windows above wrote about 17 KiB of WAL per order, enough to make a checkpoint due within the
    // paced window, whose last fsync of the tables' files held every commit for about 0.2 s (p99 100-190 ms where it
    // fell in the window). What a checkpoint costs is the server's, not the placement path's: it is flushed first.
    await db.checkpoint();
    // Untimed first: the load generator's connections are opened and the service has met this pace (unwarmed, the
    // first 0.2 s of connecting alone put about 2 % of a run's requests above 25 ms).
    const paced = await pacedAt(WARM_UP_SECONDS)
      .then(() => pacedAt(settings.seconds))
      .finally(() => http.close());
    record({
      section: 'orders',
      name: `POST /orders p99 at ${halfRate} req/s`,
      value: paced.p99,
      unit: 'ms',
      target: '<= 25 ms',
      pass: paced.p99 <= 25 && paced.failed === 0,
    });
    // Last, so that the orders of other tenants it adds (and the database's upkeep of them) are in no window above.
    let tenantsFailed = 0;
    for (const count of TENANTS_AT_ONCE)
      tenantsFailed += await benchTenantsAtOnce(pool, server, settings, baselines, count);
    const failed = place.failed + tenantsFailed + alone.failed + paced.failed;
    record({
      section: 'orders',
      name: 'POST /orders answered other than 2xx',
      value: failed,
      unit: 'requests',
      target: '0',
      pass: failed === 0,
    });
    await checkLedger(pool);
  } finally {
    await pool.end();
    await server.stop();
  }
};

/** Stands for the company's name in the serialised body the load generator fills in (see `fresh`). */
const NAME_SLOT = '{{legal name}}';

/** A formation body for `userId` serialised once, split where the company's name goes. */
function bodyAround(userId: string): [string, string] {
  return JSON.stringify(formationBody(userId, NAME_SLOT)).split(JSON.stringify(NAME_SLOT)) as [string, string];
}

/**
 * Tenant counts of {@link benchTenantsAtOnce}: a few busy tenants, and many, each with only a few orders waiting at
 * any moment (a platform's real load), beside the one tenant of the full-load windows above.
 */
const TENANTS_AT_ONCE = [4, 50];

/**
 * POST /orders from `count` tenants at once, each with its own balance and user (the same ten connections, each
 * request of the next tenant in turn), in windows alternating with the INSERT baseline's: real traffic comes from many
 * tenants, whose placements a process writes on one connection (ORD-17). Also prints the placement commits per order
 * (see {@link recordCommitsPerOrder}).
 * @returns the requests answered other than 2xx.
 */
async function benchTenantsAtOnce(
  pool: pg.Pool,
  server: { url: string; process: { pid?: number } },
  settings: BenchSettings,
  baselines: Baselines,
  count: number,
): Promise<number> {
  const tenants: Array<{ tenant: Tenant; headers: Record<string, string>; around: [string, string] }> = [];
  for (let t = 1; t <= count; t++) {
    const { tenant, headers, userId } = await createBenchTenant(
      pool,
      server.url,
      `Bench Org ${count}-${t}`,
      100_000_000_000,
    );
    tenants.push({ tenant, headers, around: bodyAround(userId) });
  }
  let n = 0;
  const next = (request: { body?: string }) => {
    n += 1;
    const { headers, around } = tenants[n % tenants.length]!;
    return { ...request, headers, body: `${around[0]}"Bench ${count} ${n} Partners LLC"${around[1]}` };
  };
  const load = (seconds: number) =>
    runLoad({
      url: `${server.url}/test/v1/orders`,
      method: 'POST',
      connections: settings.connections,
      seconds,
      requests: [{ setupRequest: next }],
    });
  await load(WARM_UP_SECONDS);
  const figures = await alternating(baselines, 'insert', settings.seconds, load, server.process.pid);
  record({
    section: 'orders',
    name: `POST /orders, ${count} tenants at once`,
    value: figures.rps,
    unit: 'req/s',
    baseline: { name: 'INSERT baseline beside it', value: figures.baselineRps },
  });
  // CPU per order moves less with a shared machine's load than orders per second: beside the one tenant's figures.
  if (figures.cpu) {
    const { path, pathRequests } = figures.cpu;
    for (const [part, value] of [
      ['the database', path.database],
      ['the service', path.server],
    ] as const) {
      record({
        section: 'orders',
        name: `POST /orders, ${count} tenants at once: CPU per request, ${part}`,
        value: pathRequests ? (value / pathRequests) * 1e6 : 0,
        unit: 'µs',
      });
    }
  }
  await recordCommitsPerOrder(
    pool,
    tenants.map((t) => t.tenant),
    `POST /orders, ${count} tenants at once`,
  );
  return figures.failed;
}

/**
 * A POST /orders body for `userId`: an LLC named `legalName` formed in Delaware with an EIN and our registered agent
 * (three orders).
 */
export function formationBody(userId: string, legalName = 'Bench Holdings LLC') {
  const address = {
    line1: '251 Little Falls Drive',
    city: 'Wilmington',
    state: 'DE',
    postalCode: '19808',
    country: 'US',
  };
  return {
    userId,
    filingState: 'DE',
    formation: {
      company: {
        legalName,
        entityType: 'LLC',
        structureType: 'MEMBER',
        principalAddress: address,
        mailingAddress: address,
        officers: [
          {
            type: 'PERSON',
            firstName: 'Ada',
            lastName: 'Lovelace',
            title: 'Managing Member',
            address,
            isPrimary: true,
          },
        ],
      },
    },
    ein: {
      responsibleParty: {
        firstName: 'Ada',
        lastName: 'Lovelace',
        taxIdType: 'SSN',
        taxId: '123-45-6789',
        title: 'Managing Member',
      },
      reasonForApplying: 'started_new_business',
      principalActivity: 'retail',
      principalProductOrService: 'Handmade furniture',
      employees: { agricultural: 0, household: 0, other: 0 },
      irsQuestions: {
        ownsHeavyHighwayVehicle: false,
        involvesGambling: false,
        filesExciseTaxForm720: false,
        sellsAlcoholTobaccoOrFirearms: false,
      },
    },
    registeredAgent: { isChangeOfAgent: false },
  };
}

/**
 * What a POST /orders cost the machine's CPU, by part, beside what a request of the INSERT baseline cost in the
 * windows between: the ratio says how many INSERT requests' worth of CPU an order takes, and the cores busy say whether
 * the machine ran out of CPU (2 of 2: more orders per second need less CPU per order) or the orders waited on
 * something else (the tenant's statements run one after another, ORD-17).
 */
function recordCpu(cpu: NonNullable<Alternated['cpu']>): void {
  const parts: Array<[keyof Omit<CpuSpent, 'wall'>, string, string]> = [
    ['database', 'the database', 'the database'],
    ['server', 'the service', 'its server'],
    ['loadGenerator', 'the load generator', 'the load generator'],
  ];
  const perRequest = (seconds: number, requests: number) => (requests ? (seconds / requests) * 1e6 : 0);
  const total = (s: CpuSpent) => s.server + s.database + s.loadGenerator + s.other;
  for (const [part, name, baselineName] of parts) {
    record({
      section: 'orders',
      name: `POST /orders: CPU per request, ${name}`,
      value: perRequest(cpu.path[part], cpu.pathRequests),
      unit: 'µs',
      baseline: {
        name: `INSERT baseline, ${baselineName}`,
        value: perRequest(cpu.baseline[part], cpu.baselineRequests),
      },
    });
  }
  record({
    section: 'orders',
    name: 'POST /orders: CPU per request, every process',
    value: perRequest(total(cpu.path), cpu.pathRequests),
    unit: 'µs',
    baseline: { name: 'INSERT baseline', value: perRequest(total(cpu.baseline), cpu.baselineRequests) },
  });
  record({
    section: 'orders',
    name: `POST /orders: cores busy (of ${os.cpus().length})`,
    value: cpu.path.wall ? total(cpu.path) / cpu.path.wall : 0,
    unit: '',
    baseline: { name: 'INSERT baseline', value: cpu.baseline.wall ? total(cpu.baseline) / cpu.baseline.wall : 0 },
  });
}

/** Counters of the bench's server: WAL position, next transaction id, order groups (one per placed request). */
interface DatabaseWork {
  walBytes: bigint;
  nextXid: bigint;
  groups: number;
}

async function databaseWork(pool: pg.Pool): Promise<DatabaseWork> {
  const { rows } = await pool.query(
    `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS wal,
            pg_snapshot_xmax(pg_current_snapshot())::text AS xid,
            (SELECT count(*) FROM order_groups)::bigint AS groups`,
  );
  return { walBytes: BigInt(rows[0].wal), nextXid: BigInt(rows[0].xid), groups: Number(rows[0].groups) };
}

/**
 * What the database did per POST /orders over the full-load windows (`work`: the counters' growth over them): write
 * transactions (each statement the service sends outside a transaction is one, so in the steady state, with no
 * reads, this counts round trips; placements written together count once, ORD-17; a wake-up is one too, OPS-5) and
 * bytes of WAL. They hardly depend on the machine's speed (only the batches' sizes do): they are what to count
 * before tuning code. Server-wide counters: the bench runs alone.
 */
function recordDatabaseWork(work: DatabaseWork): void {
  if (work.groups <= 0) return;
  record({
    section: 'orders',
    name: 'POST /orders: write transactions per request',
    value: Number(work.nextXid) / work.groups,
    unit: '',
  });
  record({
    section: 'orders',
    name: 'POST /orders: WAL per request',
    value: Number(work.walBytes) / work.groups / 1024,
    unit: 'KiB',
  });
}

/**
 * Placement statements per order of `tenants`, over every order they placed (warm-up and the windows of every
 * scenario they took part in): order groups (one per placed request) per distinct transaction that wrote them (xmin),
 * so one commit per placement statement, however many tenants it carried (ORD-17, ORD-40). Read from the tenants' own
 * rows, so the other databases of a shared server do not count, unlike the write transactions above.
 */
async function recordCommitsPerOrder(pool: pg.Pool, tenants: Tenant[], name: string): Promise<void> {
  const { rows } = await pool.query<{ groups: number; commits: number }>(
    `SELECT count(*)::int AS groups, count(DISTINCT g.xmin::text)::int AS commits
       FROM order_groups g
      WHERE (g.organization_id, g.environment) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
    [tenants.map((t) => t.organizationId), tenants.map((t) => t.environment)],
  );
  if (!rows[0]!.groups) return;
  record({
    section: 'orders',
    name: `${name}: placement commits per order`,
    value: rows[0]!.commits / rows[0]!.groups,
    unit: '',
  });
}

/** Seconds of full load while the placement statement's states are sampled (not part of any reported rate). */
const STATES_SECONDS = 3;

/**
 * The share of the full-load window in which the tenant's placement statement was running in the database, waiting
 * for its commit's flush, waiting for something else, or not there at all (the database waiting for the service).
 * One tenant's statements run one at a time (ORD-17), so these say how much of the database's time the tenant's
 * orders could use, and where the rest went.
 */
function recordStatementStates(states: StatementStates): void {
  const names: Record<keyof StatementStates, string> = {
    running: 'running',
    flush: "waiting for its commit's flush",
    otherWait: 'waiting for anything else',
    none: 'not in the database (between statements)',
  };
  for (const [state, name] of Object.entries(names) as Array<[keyof StatementStates, string]>) {
    record({
      section: 'orders',
      name: `POST /orders: placement statement ${name}`,
      value: states[state] * 100,
      unit: '% of samples',
    });
  }
}

/** After the run every tenant's ledger must still explain its balance exactly. */
async function checkLedger(pool: pg.Pool): Promise<void> {
  const { rows } = await pool.query(
    `SELECT count(*)::int AS off
       FROM balances b
      WHERE b.balance_cents <> (SELECT COALESCE(sum(l.amount_cents), 0) FROM ledger_entries l
                                 WHERE l.organization_id = b.organization_id AND l.environment = b.environment)`,
  );
  const ok = rows[0].off === 0;
  record({
    section: 'orders',
    name: 'ledger sum equals cached balance, every tenant',
    value: ok ? 1 : 0,
    unit: '(1 = yes)',
    target: 'equal',
    pass: ok,
  });
}
