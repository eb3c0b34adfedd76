/**
 * Bench section `portal`: the partner portal's main pages for ONE tenant with 1,000,000 orders (BENCH_PORTAL_ORDERS),
 * each with its status history, ledger debit, event and webhook delivery, beside 1,000 users, 10,000 companies,
 * 200,000 failed API requests of the last week and 100,000 audit log entries, seeded with set-based SQL
 * (generate_series) in a throw-away database. A signed-in owner (a session made as sign-in makes it) asks each page at
 * a fixed rate below saturation (PAGE_RATE) through the service in its own process; every page's answer must be a 200.
 * Measured: p95 of the order list without and with each filter (status, type, state, user, dates), an order page, the
 * company list, a company page, the balance with its ledger (and filtered by type), the delivery log, the events
 * explorer, the request log and the audit log. Target: p95 below 100 ms each (PORTAL-47). Prints the plan of the order
 * list's queries.
 */
import pg from 'pg';
import { Pool } from 'undici';
import { newId } from '../src/lib/ids.js';
import { createOrganization } from '../src/modules/organizations/organizations.service.js';
import { createSession, sessionCookieValue } from '../src/modules/portal/sessions.js';
import type { BenchSection } from './run.js';
import { startChild } from './lib/child.js';
import { addWindow, emptySide, percentile, runPaced, windowP99Text } from './lib/load.js';
import { record } from './lib/report.js';
import { benchServiceSettings } from './lib/service-settings.js';

const USERS = 1000;
const COMPANIES = 10_000;
const ORDERS_PER_GROUP = 10;
const SEED_BATCH = 100_000;
const FAILED_REQUESTS = 200_000;
const AUDIT_ENTRIES = 100_000;
/** Seconds between two seeded orders: 1,000,000 orders span about three years. */
const ORDER_SPACING_SECONDS = 90;
/** Pages per second asked of each page: a page of 50 rows renders in a few ms, far below what the service sustains. */
const PAGE_RATE = 10;
const TARGET_MS = 100;
/** The types orders take turns in; EIN orders (one per company, ORD-EIN) are the fifth of each company's first group. */
const ORDER_TYPES = ['formation', 'annual_report', 'registered_agent', 'foreign_qualification'];

export const benchPortal: BenchSection = async (db, settings) => {
  const orders = Math.max(10_000, Number(process.env.BENCH_PORTAL_ORDERS ?? 1_000_000));
  const url = await db.another('portal');
  const server = await startChild('app-server.ts', {
    DATABASE_URL: url,
    DATABASE_POOL_SIZE: String(settings.connections),
  });
  const pool = new pg.Pool({ connectionString: url, max: 3 });
  const http = new Pool(server.url, { connections: 16 });
  try {
    const seeded = await seed(pool, orders);
    const cookie = await ownerCookie(pool, seeded.organizationId);
    const headers = { cookie, host: 'localhost' };
    const day = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
    const pages: Array<[string, string]> = [
      ['orders', '/portal/orders'],
      ['orders ?status=exception', '/portal/orders?status=exception'],
      ['orders ?type=annual_report', '/portal/orders?type=annual_report'],
      ['orders ?type=ein (1 % of orders, the oldest)', '/portal/orders?type=ein'],
      ['orders ?state=CA', '/portal/orders?state=CA'],
      ['orders ?user=', `/portal/orders?user=${seeded.userId}`],
      ['orders ?from=&to= (a week a year ago)', `/portal/orders?from=${day(372)}&to=${day(365)}`],
      ['orders, all filters', `/portal/orders?status=filed&type=annual_report&state=CA&from=${day(1000)}&to=${day(0)}`],
      ['order page', `/portal/orders/${seeded.orderId}`],
      ['companies', '/portal/companies'],
      ['company page', `/portal/companies/${seeded.companyId}`],
      ['balance and ledger', '/portal/balance'],
      ['balance ?type=credit', '/portal/balance?type=credit'],
      ['delivery log', '/portal/deliveries'],
      ['delivery log ?status=failed', '/portal/deliveries?status=failed'],
      ['events explorer', '/portal/events'],
      ['request log', '/portal/request-log'],
      ['audit log', '/portal/audit-log'],
    ];
    for (const [name, path] of pages) {
      // Each page answers 200 to the signed-in owner before it is timed: a redirect or error page would time nothing.
      const check = await http.request({ method: 'GET', path, headers });
      const body = await check.body.text();
      if (check.statusCode !== 200) throw new Error(`${path}: ${check.statusCode} ${body.slice(0, 300)}`);
      // An untimed second first: the first requests of a page pay for compiling its code and plans.
      await runPaced({ pool: http, rate: PAGE_RATE, seconds: 1, next: () => ({ method: 'GET', path, headers }) });
      const side = emptySide();
      let failed = 0;
      for (let w = 0; w < 3; w++) {
        const run = await runPaced({
          pool: http,
          rate: PAGE_RATE,
          seconds: Math.max(2, settings.seconds / 3),
          next: () => ({ method: 'GET', path, headers }),
        });
        failed += run.failed;
        addWindow(side, run.latencies);
      }
      const p95 = percentile(side.latencies, 95);
      process.stdout.write(`  portal: ${name} p99 of each window (ms): ${windowP99Text(side)}\n`);
      record({
        section: 'portal',
        name: `${name} p95 at ${orders.toLocaleString('en-US')} orders`,
        value: p95,
        unit: 'ms',
        target: `< ${TARGET_MS} ms, every answer 200`,
        pass: p95 < TARGET_MS && failed === 0,
      });
    }
    await printPlans(pool, seeded);
  } finally {
    await http.close();
    await pool.end();
    await server.stop();
  }
};

/** What the timed pages name: the tenant, an order, a company and a user of its. */
interface Seeded {
  organizationId: string;
  orderId: string;
  companyId: string;
  userId: string;
}

/**
 * The tenant and its rows, vacuumed and checkpointed (measured as a database in service is). Orders are spread over
 * the last three years (the newest last), in groups of 10 of one user, company and state; their types take turns,
 * their states run through the catalogue (EIN orders are 1 %, the first of each company), and their statuses are those of a history: the newest 1,000 submitted, one
 * in 200 an exception, one in 100 cancelled, the rest filed. Every debit is paid by a seeded credit per batch, so the
 * balance stays the sum of the ledger.
 */
async function seed(pool: pg.Pool, orders: number): Promise<Seeded> {
  const started = Date.now();
  const { organization, apiKeys } = await createOrganization(pool, 'Bench Portal Org');
  const org = organization.id;
  const keyId = apiKeys.test.id;
  const states = (await pool.query<{ state: string }>('SELECT state FROM state_fees ORDER BY state')).rows.map(
    (r) => r.state,
  );
  const stateArray = `ARRAY[${states.map((s) => `'${s}'`).join(',')}]`;
  const address = `'{"line1":"1 Main St","city":"Dover","state":"DE","postalCode":"19901","country":"US"}'`;
  await pool.query(
    `WITH users AS (
       INSERT INTO users (id, organization_id, environment, full_name, email, email_normalized)
       SELECT 'user_00p' || lpad(n::text, 18, '0'), $1, 'test', 'Portal User ' || n, 'p' || n || '@example.com', 'p' || n || '@example.com'
         FROM generate_series(0, ${USERS - 1}) n RETURNING 1),
     companies AS (
       INSERT INTO companies (id, organization_id, environment, slug, legal_name, entity_type, structure_type, formation_state, formation_date, principal_address, mailing_address)
       SELECT 'comp_00p' || lpad(n::text, 18, '0'), $1, 'test', 'portal-' || n,
              'Portal ' || n || ' LLC', 'LLC', 'MEMBER', 'DE', date '2020-01-01' + (n % 1000), ${address}, ${address}
         FROM generate_series(0, ${COMPANIES - 1}) n RETURNING 1)
     INSERT INTO webhook_endpoints (id, organization_id, environment, url, event_types, secret)
     SELECT 'we_00p' || lpad(n::text, 20, '0'), $1, 'test', 'https://hooks.example.com/portal/' || n, ARRAY['filing.status_changed'], 'whsec_portal_not_used'
       FROM generate_series(0, 2) n`,
    [org],
  );
  for (let from = 0; from < orders; from += SEED_BATCH) {
    const to = Math.min(orders, from + SEED_BATCH);
    await pool.query(
      `WITH o AS (
         SELECT i, i / ${ORDERS_PER_GROUP} AS g, lpad(i::text, 20, '0') AS sfx,
                now() - make_interval(secs => ($3::bigint - i) * ${ORDER_SPACING_SECONDS}) AS at,
                (${stateArray})[1 + (i / ${ORDERS_PER_GROUP}) % ${states.length}] AS state,
                CASE WHEN i % ${ORDERS_PER_GROUP} = 5 AND i / ${ORDERS_PER_GROUP} < ${COMPANIES} THEN 'ein'
                     ELSE (ARRAY[${ORDER_TYPES.map((t) => `'${t}'`).join(',')}])[1 + i % ${ORDER_TYPES.length}] END AS type,
                CASE WHEN i >= $3::bigint - 1000 THEN 'submitted' WHEN i % 200 = 7 THEN 'exception'
                     WHEN i % 100 = 3 THEN 'cancelled' ELSE 'filed' END AS status
           FROM generate_series($1::bigint, $2::bigint - 1) i
       ), groups AS (
         INSERT INTO order_groups (id, organization_id, environment, user_id, company_id, filing_state, source, billing, request, total_cents, created_at)
         SELECT DISTINCT ON (g) 'ordgrp_0p' || lpad(g::text, 20, '0'), $4, 'test',
                'user_00p' || lpad((g % ${COMPANIES} % ${USERS})::text, 18, '0'), 'comp_00p' || lpad((g % ${COMPANIES})::text, 18, '0'),
                state, 'api', 'balance', '{}', 5000 * ${ORDERS_PER_GROUP}, at
           FROM o ORDER BY g, i RETURNING 1
       ), orders AS (
         INSERT INTO orders (id, organization_id, environment, group_id, company_id, user_id, order_type, filing_state, filing_status,
                             exception_code, exception_message, billing, amount_cents, details, created_at, updated_at)
         SELECT 'order_00p' || sfx, $4, 'test', 'ordgrp_0p' || lpad(g::text, 20, '0'), 'comp_00p' || lpad((g % ${COMPANIES})::text, 18, '0'),
                'user_00p' || lpad((g % ${COMPANIES} % ${USERS})::text, 18, '0'), type, state, status,
                CASE WHEN status = 'exception' THEN 'name_unavailable' END,
                CASE WHEN status = 'exception' THEN 'The name is taken in this state.' END,
                'balance', 5000, '{}', at, at
           FROM o RETURNING 1
       ), history AS (
         INSERT INTO order_status_history (id, order_id, organization_id, environment, from_status, to_status, actor, created_at)
         SELECT 'fsc_00p' || sfx, 'order_00p' || sfx, $4, 'test', NULL, 'submitted', 'api', at FROM o RETURNING 1
       ), ledger AS (
         INSERT INTO ledger_entries (id, organization_id, environment, type, amount_cents, balance_after_cents, line_type, description, order_id, created_by, created_at)
         SELECT 'txn_00p' || sfx, $4, 'test', 'debit', -5000, 0, type, 'Order (seeded)', 'order_00p' || sfx, 'bench', at FROM o RETURNING 1
       ), events AS (
         INSERT INTO events (id, organization_id, environment, type, data, created_at)
         SELECT 'evt_00p' || sfx, $4, 'test', 'filing.status_changed',
                jsonb_build_object('orderId', 'order_00p' || sfx, 'orderType', type, 'filingStatus', 'submitted'), at FROM o RETURNING 1
       )
       INSERT INTO webhook_deliveries (id, organization_id, environment, endpoint_id, event_id, status, attempt_count, created_at)
       SELECT 'wd_00p' || lpad(i::text, 21, '0'), $4, 'test', 'we_00p' || lpad((i % 3)::text, 20, '0'), 'evt_00p' || sfx,
              CASE WHEN i % 50 = 1 THEN 'failed' ELSE 'succeeded' END, 1, at FROM o`,
      [from, to, orders, org],
    );
    await pool.query(
      `INSERT INTO ledger_entries (id, organization_id, environment, type, amount_cents, balance_after_cents, description, created_by, created_at)
       VALUES ('txn_00c' || lpad($1::text, 20, '0'), $2, 'test', 'credit', $3::bigint * 5000, 0, 'Seed credit', 'bench',
               now() - make_interval(secs => ($4::bigint - $1::bigint) * ${ORDER_SPACING_SECONDS}))`,
      [from, org, to - from, orders],
    );
  }
  await pool.query(
    `WITH f AS (
       INSERT INTO failed_api_requests (id, organization_id, environment, api_key_id, method, path, status, request_id, error_body, created_at)
       SELECT 'freq_00p' || lpad(n::text, 18, '0'), $1, 'test', $2, 'POST', '/test/v1/orders', CASE WHEN n % 3 = 0 THEN 404 ELSE 400 END,
              'req-portal-' || n, '{"code":"validation_failed","message":"seeded"}',
              now() - make_interval(secs => (${FAILED_REQUESTS} - n) * 3)
         FROM generate_series(0, ${FAILED_REQUESTS - 1}) n RETURNING 1)
     INSERT INTO audit_log (id, organization_id, environment, actor_kind, actor_id, actor_label, client_address, action, target_id, before, after, created_at)
     SELECT 'aud_00p' || lpad(n::text, 20, '0'), $1, 'test', 'member', 'mem_bench', 'owner@example.com', '203.0.113.9',
            'api_key.created', 'key_' || n, NULL, '{"name":"seeded"}', now() - make_interval(secs => (${AUDIT_ENTRIES} - n) * 60)
       FROM generate_series(0, ${AUDIT_ENTRIES - 1}) n`,
    [org, keyId],
  );
  await pool.query('VACUUM ANALYZE');
  await pool.query('CHECKPOINT');
  process.stdout.write(
    `  portal: ${orders.toLocaleString('en-US')} orders of one tenant seeded in ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
  );
  const last = `order_00p${String(orders - 1).padStart(20, '0')}`;
  const row = (
    await pool.query<{ company_id: string; user_id: string }>('SELECT company_id, user_id FROM orders WHERE id = $1', [
      last,
    ])
  ).rows[0]!;
  return { organizationId: org, orderId: last, companyId: row.company_id, userId: row.user_id };
}

/**
 * The cookie of an owner's session, made as sign-in makes one after both factors (the bench never times sign-in's
 * password hashing here; the `signin` section does): the member has a second factor, the session shows test.
 */
async function ownerCookie(pool: pg.Pool, organizationId: string): Promise<string> {
  const memberId = newId('member');
  await pool.query(
    `INSERT INTO members (id, email, name, password_hash, totp_sealed, totp_enabled_at)
     VALUES ($1, 'owner@example.com', 'Bench Owner', 'scrypt$unused', 'sealed:v1:unused', now())`,
    [memberId],
  );
  await pool.query(`INSERT INTO organization_memberships (organization_id, member_id, role) VALUES ($1, $2, 'owner')`, [
    organizationId,
    memberId,
  ]);
  const sessionId = await createSession(pool, {
    memberId,
    pending: false,
    clientAddress: '127.0.0.1',
    userAgent: 'bench',
  });
  const secret = benchServiceSettings('').FILE_URL_SECRET!;
  return `fcs_portal=${sessionCookieValue(secret, sessionId)}`;
}

/** EXPLAIN ANALYZE of the order list's queries (no filter, user, a rare type, status) and the order page's siblings. */
async function printPlans(pool: pg.Pool, seeded: Seeded): Promise<void> {
  const base = `SELECT o.id, c.legal_name, u.full_name FROM orders o JOIN companies c ON c.id = o.company_id JOIN users u ON u.id = o.user_id
                 WHERE o.organization_id = $1 AND o.environment = 'test'`;
  const queries: Array<[string, string, unknown[]]> = [
    ['orders', `${base} ORDER BY o.created_at DESC, o.id DESC LIMIT 51`, [seeded.organizationId]],
    [
      'orders ?user=',
      `${base} AND o.user_id = $2 ORDER BY o.created_at DESC, o.id DESC LIMIT 51`,
      [seeded.organizationId, seeded.userId],
    ],
    [
      'orders ?type=ein',
      `${base} AND o.order_type = 'ein' ORDER BY o.created_at DESC, o.id DESC LIMIT 51`,
      [seeded.organizationId],
    ],
    [
      "order page: the group's other orders",
      'SELECT id, order_type, filing_status FROM orders WHERE group_id = (SELECT group_id FROM orders WHERE id = $1) AND id <> $1 ORDER BY id',
      [seeded.orderId],
    ],
    [
      'orders ?status=exception',
      `${base} AND o.filing_status = 'exception' ORDER BY o.created_at DESC, o.id DESC LIMIT 51`,
      [seeded.organizationId],
    ],
  ];
  for (const [name, sql, params] of queries) {
    const { rows } = await pool.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) ${sql}`, params);
    process.stdout.write(`\n  plan ${name}:\n${rows.map((r) => `    ${r['QUERY PLAN']}`).join('\n')}\n`);
  }
}
