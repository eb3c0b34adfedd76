/**
 * `npm run bench`: latency and throughput of POST /orders on loopback (ARCHITECTURE.md "bench/").
 *
 * Starts the app on its own database: a fresh database on the server of DATABASE_URL when set, else an
 * embedded PostgreSQL in .data/bench-pg (port BENCH_PG_PORT, default 54331). Creates a tenant with a large
 * test balance and one user, then runs autocannon against POST /test/v1/orders/quote (read-only) and
 * POST /test/v1/orders (each request forms a company: one transaction with the balance lock, company,
 * order, two ledger debits, history and event). Bounded: BENCH_SECONDS (default 15, at most 25) per
 * scenario, BENCH_CONNECTIONS (default 10). Prints a table, checks the ledger still sums to the balance,
 * and drops the database (or stops the embedded server) at the end.
 */
import path from 'node:path';
import autocannon, { type Result } from 'autocannon';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { prepareDatabase, seed } from '../src/boot.js';
import { loadConfig } from '../src/config.js';
import type { AppContext, Tenant } from '../src/context.js';
import { createPool } from '../src/lib/db.js';
import { startEmbeddedDb, type EmbeddedDb } from '../src/lib/embedded-db.js';
import { createLogger } from '../src/lib/logger.js';
import { creditBalance } from '../src/modules/billing/ledger.js';
import { createOrganization } from '../src/modules/organizations/organizations.service.js';

const SECONDS = Math.min(Number(process.env.BENCH_SECONDS ?? 15), 25);
const CONNECTIONS = Math.max(1, Math.min(Number(process.env.BENCH_CONNECTIONS ?? 10), 100));

async function main(): Promise<void> {
  const db = await openDatabase();
  const pool = createPool(db.url, CONNECTIONS + 5);
  let app: Awaited<ReturnType<typeof buildApp>> | null = null;
  try {
    await prepareDatabase(db.url);
    await seed(pool);
    const config = loadConfig({
      DATABASE_URL: db.url, LOG_LEVEL: 'warn', OPERATOR_TOKEN: 'bench-operator-token-0123456789abcdef',
      FILE_URL_SECRET: 'bench-file-url-secret-0123', DATA_DIR: '.data/bench',
    });
    const ctx: AppContext = { config, pool, log: createLogger('warn'), secrets: { operatorToken: config.operatorToken!, fileUrlSecret: config.fileUrlSecret! } };
    app = await buildApp(ctx, { logger: false });
    const base = await app.listen({ host: '127.0.0.1', port: 0 });

    const { organization, apiKeys } = await createOrganization(pool, 'Bench Org');
    const tenant: Tenant = { organizationId: organization.id, environment: 'test' };
    await creditBalance(pool, tenant, 1_000_000_000, 'bench credit', 'bench');
    const headers = { 'content-type': 'application/json', 'x-api-key': apiKeys.test.key };
    const userRes = await fetch(`${base}/test/v1/users`, { method: 'POST', headers, body: JSON.stringify({ fullName: 'Bench User', email: 'bench@example.com' }) });
    const user = (await userRes.json()) as { id: string };
    const template = formationBody(user.id);
    const body = JSON.stringify(template);
    // Each request forms a differently named company, as real traffic would (same names would contend on the slug index).
    let n = 0;
    const fresh = (request: { body?: string }) => {
      n += 1;
      return { ...request, body: JSON.stringify({ ...template, formation: { ...template.formation, company: { ...template.formation.company, legalName: `Bench ${n} Holdings LLC` } } }) };
    };

    process.stdout.write(`POST /orders benchmark: ${CONNECTIONS} connections, ${SECONDS} s per scenario, ${base}\n\n`);
    const rows: Array<[string, Result]> = [];
    for (const [label, url] of [['POST /orders/quote', `${base}/test/v1/orders/quote`], ['POST /orders', `${base}/test/v1/orders`]]) {
      rows.push([label, await autocannon({ url, method: 'POST', headers, body, connections: CONNECTIONS, duration: SECONDS, timeout: 10, requests: [{ setupRequest: fresh }] })]);
    }
    printTable(rows);
    await checkLedger(pool, tenant);
  } finally {
    if (app) await app.close();
    await pool.end();
    await db.close();
  }
}

function formationBody(userId: string) {
  const address = { line1: '251 Little Falls Drive', city: 'Wilmington', state: 'DE', postalCode: '19808', country: 'US' };
  return {
    userId,
    filingState: 'DE',
    formation: {
      company: {
        legalName: 'Bench Holdings LLC', entityType: 'LLC', structureType: 'MEMBER', principalAddress: address, mailingAddress: address,
        officers: [{ type: 'PERSON', firstName: 'Ada', lastName: 'Lovelace', title: 'Managing Member', address, isPrimary: true }],
      },
      registeredAgent: { type: 'COMPANY', companyName: 'Agents Inc', addressStreet: '1 Agent Way', addressCity: 'Dover', addressState: 'DE', addressZip: '19901' },
    },
  };
}

function printTable(rows: Array<[string, Result]>): void {
  const head = ['scenario', 'req/s avg', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', '2xx', 'non-2xx', 'errors'];
  const lines = rows.map(([label, r]) => [label, r.requests.average.toFixed(0), r.latency.p50, r.latency.p90, r.latency.p99, r.latency.max, r['2xx'], r.non2xx, r.errors + r.timeouts].map(String));
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  process.stdout.write(`${fmt(head)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${lines.map(fmt).join('\n')}\n\n`);
}

/** After the run the ledger must still explain the balance exactly (issue 3 item 6). */
async function checkLedger(pool: pg.Pool, tenant: Tenant): Promise<void> {
  const { rows } = await pool.query(
    `SELECT (SELECT COALESCE(sum(amount_cents), 0) FROM ledger_entries WHERE organization_id = $1 AND environment = $2)::bigint AS ledger,
            (SELECT balance_cents FROM balances WHERE organization_id = $1 AND environment = $2)::bigint AS balance,
            (SELECT count(*) FROM orders WHERE organization_id = $1)::int AS orders`,
    [tenant.organizationId, tenant.environment],
  );
  const ok = Number(rows[0].ledger) === Number(rows[0].balance);
  process.stdout.write(`orders placed: ${rows[0].orders}; ledger sum ${ok ? '==' : '!='} cached balance (${rows[0].ledger} / ${rows[0].balance} cents)\n`);
  if (!ok) process.exitCode = 1;
}

/** A fresh database for the run, and how to get rid of it. */
async function openDatabase(): Promise<{ url: string; close(): Promise<void> }> {
  let embedded: EmbeddedDb | null = null;
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    embedded = await startEmbeddedDb(path.resolve('.data/bench-pg'), Number(process.env.BENCH_PG_PORT ?? 54331), 'bench');
    serverUrl = embedded.url;
  }
  const name = `fcs_bench_${process.pid}_${Date.now().toString(36)}`;
  const adminUrl = withDatabase(serverUrl, 'postgres');
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  return {
    url: withDatabase(serverUrl, name),
    async close() {
      await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
      if (embedded) await embedded.stop();
    },
  };
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

main().catch((err) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
