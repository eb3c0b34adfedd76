import fs from 'node:fs';
import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { applyRepeatables, repeatableFiles } from '../src/lib/migrate.js';
import { schemaSnapshot } from '../src/lib/schema-snapshot.js';
import { createTestApp, type TestApp } from './harness.js';

// The schema is readable in one place (migrations/schema.sql), and every function and trigger in one file of
// migrations/repeatable/. Each test file's database is a copy of the suite's freshly migrated template.

let t: TestApp;
let client: pg.PoolClient;
beforeAll(async () => {
  t = await createTestApp();
  client = await t.ctx.pool.connect();
});
afterAll(async () => {
  client.release();
  await t.close();
});

it('a freshly migrated database has exactly the schema of migrations/schema.sql (else run `npm run db:snapshot`)', async () => {
  const snapshot = fs.readFileSync('migrations/schema.sql', 'utf8');
  expect(await schemaSnapshot(client)).toBe(snapshot);
});

it('keeps each function and trigger of the database in exactly one file of migrations/repeatable/', async () => {
  const files = repeatableFiles();
  const { rows } = await client.query<{ kind: string; name: string }>(
    `SELECT 'FUNCTION' AS kind, proname AS name FROM pg_proc WHERE pronamespace = 'public'::regnamespace
     UNION ALL
     SELECT 'TRIGGER', t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
      WHERE c.relnamespace = 'public'::regnamespace AND NOT t.tgisinternal
     ORDER BY 1, 2`,
  );
  const homes = rows.map(({ kind, name }) => {
    const definition =
      kind === 'FUNCTION'
        ? new RegExp(`CREATE OR REPLACE FUNCTION ${name}\\(`)
        : new RegExp(`CREATE (OR REPLACE )?(CONSTRAINT )?TRIGGER ${name}\\s`);
    return `${kind} ${name}: ${files
      .filter((f) => definition.test(f.sql))
      .map((f) => f.name)
      .join(', ')}`;
  });
  expect(homes.filter((h) => !/: [^,]+$/.test(h))).toEqual([]);
  expect(rows.length).toBeGreaterThan(20);
});

it('puts back a function changed behind its file at the next start, and changes nothing when nothing changed', async () => {
  expect(await applyRepeatables(client)).toEqual([]);
  await client.query(
    `CREATE OR REPLACE FUNCTION payment_status(p_payment text) RETURNS text LANGUAGE sql STABLE AS $$ SELECT 'refunded' $$`,
  );
  expect(await applyRepeatables(client)).toEqual(repeatableFiles().map((f) => f.name));
  const { rows } = await client.query(`SELECT payment_status('pay_missing') AS status`);
  expect(rows[0].status).toBeNull();
  expect(await schemaSnapshot(client)).toBe(fs.readFileSync('migrations/schema.sql', 'utf8'));
  expect(await applyRepeatables(client)).toEqual([]);
});

it('declares no index of the tables every placement writes descending (ORD-41)', async () => {
  // A descending key puts each new row's entry first in its tenant's range, where full pages split in the middle.
  const { rows } = await client.query<{ index: string }>(
    `SELECT i.indexrelid::regclass::text AS index
       FROM pg_index i
      WHERE i.indrelid = ANY ('{companies,company_admins,order_groups,orders,order_status_history,ein_tax_ids,events,
                                webhook_deliveries,ledger_entries}'::regclass[])
        AND EXISTS (SELECT 1 FROM unnest(i.indoption::int2[]) AS o(flags) WHERE o.flags & 1 = 1)
      ORDER BY 1`,
  );
  expect(rows.map((r) => r.index)).toEqual([]);
});
