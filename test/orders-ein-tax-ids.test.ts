import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import pino from 'pino';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Environment } from '../src/context.js';
import { newDataKeyText, parseDataKey } from '../src/lib/secret-box.js';
import { loggerOptions } from '../src/lib/logger.js';
import { transitionOrder } from '../src/modules/filings/filings.service.js';
import { revealTaxId } from '../src/modules/filings/tax-id-reveal.js';
import { purgeExpiredTask } from '../src/modules/maintenance/purge-expired.task.js';
import { destroyExpiredTaxIds, openTaxId, resealTaxIds } from '../src/modules/orders/ein-tax-ids.js';
import { runCli } from './cli-runner.js';
import { createCompany } from './factories.js';
import { createTestApp, TEST_DATA_ENCRYPTION_KEY, type TestApp, type TestTenant } from './harness.js';
import { einObject, formationBody } from './orders-fixtures.js';

// ORD-EIN-6 to ORD-EIN-9: the responsible party's tax id is kept sealed for the filing team, corrected after IRS
// exceptions 483/484, and destroyed after retention; it appears nowhere else in clear.

const run = promisify(execFile);

let t: TestApp;
let tenant: TestTenant;

beforeAll(async () => {
  t = await createTestApp({ LOG_LEVEL: 'trace' });
  // The services' own logger writes where the request logs go, so the scan below sees both.
  t.ctx.log = pino(
    loggerOptions('trace'),
    new Writable({
      write(chunk, _enc, cb) {
        t.logs.push(String(chunk));
        cb();
      },
    }),
  );
  tenant = await t.newTenant('Sealed Tax Ids');
  await t.admin('POST', `/organizations/${tenant.organizationId}/balance-credits`, {
    environment: 'live',
    amount: 50_000,
  });
  await tenant.api('POST', '/test_helpers/balance-credits', { amount: 50_000 });
});
afterAll(() => t.close());

/** A responsible party with its own SSN (so each test's number is found only where that test put it). */
const party = (taxId: string, overrides: Record<string, unknown> = {}) => ({
  ...einObject().responsibleParty,
  taxId,
  ...overrides,
});

/** Places an EIN order for an existing company (`env`), with the party's `taxId`. @returns the order id. */
async function einForCompany(taxId: string, env: Environment = 'test', headers: Record<string, string> = {}) {
  const { user, company } = await createCompany(tenant, env);
  const res = await tenant.api(
    'POST',
    '/orders',
    {
      userId: user.id,
      companyId: company.id,
      filingState: 'DE',
      ein: einObject({ responsibleParty: party(taxId) }),
    },
    { env, headers },
  );
  expect(res.statusCode, res.body).toBe(201);
  return { orderId: res.json().items[0].orderId as string, companyId: company.id, userId: user.id, res };
}

/** Places a formation with an EIN (the batched path, ORD-17). @returns the EIN order's id. */
async function einWithFormation(taxId: string, env: Environment = 'test') {
  const { user } = await createCompany(tenant, env);
  const body = formationBody(user.id, 'WY', { extra: { ein: einObject({ responsibleParty: party(taxId) }) } });
  const res = await tenant.api('POST', '/orders', body, { env });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().items.find((i: { orderType: string }) => i.orderType === 'ein').orderId as string;
}

const taxIdRow = async (orderId: string) =>
  (await t.ctx.pool.query('SELECT sealed, destroyed_at FROM ein_tax_ids WHERE order_id = $1', [orderId])).rows[0] as
    | { sealed: string | null; destroyed_at: Date | null }
    | undefined;

const details = async (orderId: string) =>
  (await t.ctx.pool.query('SELECT details FROM orders WHERE id = $1', [orderId])).rows[0].details as {
    responsibleParty: Record<string, unknown>;
  };

/** Moves an order as the filing team would (operators' transition, FIL-11). */
const move = (orderId: string, filingStatus: string, extra: Record<string, unknown> = {}) =>
  transitionOrder(t.ctx, null, orderId, { filingStatus, ...extra }, 'cli');

describe('the tax id is kept sealed (ORD-EIN-6)', () => {
  it('is stored only sealed under the data key with the order id, beside the last four digits, in both environments and both placement paths', async () => {
    const keyId = t.ctx.secrets.dataKeys.current.id;
    const orders = [await einForCompany('212-45-6781', 'test'), await einForCompany('212-45-6782', 'live')].map(
      (o) => o.orderId,
    );
    orders.push(await einWithFormation('212-45-6783', 'test'), await einWithFormation('212-45-6784', 'live'));
    for (const [i, orderId] of orders.entries()) {
      const row = await taxIdRow(orderId);
      expect(row?.sealed, orderId).toMatch(new RegExp(`^sealed:v1:${keyId}:`));
      expect(row!.sealed).not.toContain(`21245678${i + 1}`);
      expect(openTaxId(t.ctx.secrets.dataKeys, orderId, row!.sealed!)).toBe(`212-45-678${i + 1}`);
      // The order id is the associated data: copied to another order, the value does not open.
      expect(() => openTaxId(t.ctx.secrets.dataKeys, orders[(i + 1) % orders.length]!, row!.sealed!)).toThrow(
        /does not open/,
      );
      const rp = (await details(orderId)).responsibleParty;
      expect(rp.taxIdLast4).toBe(`678${i + 1}`);
      expect(rp).not.toHaveProperty('taxId');
    }
    // The database refuses a tax id in clear, whatever code would write it.
    await expect(
      t.ctx.pool.query("UPDATE ein_tax_ids SET sealed = '212456781' WHERE order_id = $1", [orders[0]]),
    ).rejects.toThrow(/check constraint/);
  });

  it('a pg_dump of the database and the logs never hold it in clear, after orders, a replay, a correction and a reveal', async () => {
    const first = '318-62-3947';
    const corrected = '329-71-4836';
    const key = { 'idempotency-key': `ein-dump-${Date.now()}` };
    const placed = await einForCompany(first, 'live', key);
    const replay = await tenant.api(
      'POST',
      '/orders',
      {
        userId: placed.userId,
        companyId: placed.companyId,
        filingState: 'DE',
        ein: einObject({ responsibleParty: party(first) }),
      },
      { env: 'live', headers: key },
    );
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const other = await einWithFormation(first, 'test');
    await move(placed.orderId, 'exception', { exceptionCode: '483' });
    const fixed = await tenant.api(
      'PUT',
      `/orders/${placed.orderId}/ein-responsible-party`,
      party(corrected, { lastName: 'Byron' }),
      { env: 'live', headers: { 'idempotency-key': `ein-dump-fix-${Date.now()}` } },
    );
    expect(fixed.statusCode, fixed.body).toBe(200);
    const revealed = await revealTaxId(t.ctx, placed.orderId, {
      actor: 'cli:test',
      reason: 'filing SS-4',
      clientAddress: 'cli@test',
    });
    expect(revealed.taxId).toBe(corrected);
    expect((await revealTaxId(t.ctx, other, { actor: 'cli:test', reason: 'x', clientAddress: 'y' })).taxId).toBe(first);
    const secrets = [first, corrected].flatMap((n) => [n, n.replace(/-/g, '')]);

    const logs = t.logs.join('');
    expect(logs.length).toBeGreaterThan(1000);
    for (const s of secrets) expect(logs, `${s} in the logs`).not.toContain(s);

    const dump = await databaseDump(t.ctx.config.databaseUrl!);
    expect(dump).toContain('sealed:v1:');
    expect(dump).toContain(placed.orderId);
    for (const s of secrets) expect(dump.includes(s), `${s} in the pg_dump`).toBe(false);
  });
});

describe('correcting the responsible party (ORD-EIN-8)', () => {
  it('PUT takes it only in exception 483 or 484: a new sealed value, the details, back to pending with an event', async () => {
    for (const env of ['test', 'live'] as const) {
      const { orderId } = await einForCompany('412-45-6789', env);
      const put = (body: unknown, headers: Record<string, string> = {}) =>
        tenant.api('PUT', `/orders/${orderId}/ein-responsible-party`, body, { env, headers });
      const before = (await taxIdRow(orderId))!.sealed;

      const early = await put(party('423-56-7890'));
      expect(early.statusCode, early.body).toBe(409);
      expect(early.json().code).toBe('invalid_transition');
      await move(orderId, 'exception', { exceptionCode: '465' });
      expect((await put(party('423-56-7890'))).statusCode).toBe(409);
      await move(orderId, 'exception', { exceptionCode: '484', exceptionMessage: 'Name does not match' });

      const bad = await put(party('666-12-3456'));
      expect(bad.statusCode).toBe(400);
      expect(bad.json().errors).toEqual([expect.objectContaining({ field: 'taxId' })]);
      expect(bad.body).not.toContain('666');
      expect((await put({ ...party('423-56-7890'), extra: 1 })).statusCode).toBe(400);
      expect((await taxIdRow(orderId))!.sealed).toBe(before);

      const key = { 'idempotency-key': `fix-${env}-${orderId}` };
      const fixed = await put(party('423-56-7890', { lastName: 'King', middleName: 'Augusta' }), key);
      expect(fixed.statusCode, fixed.body).toBe(200);
      expect(fixed.json()).toMatchObject({ orderId, orderType: 'ein', filingStatus: 'pending' });
      expect(fixed.body).not.toContain('423');
      const row = (await taxIdRow(orderId))!;
      expect(row.sealed).not.toBe(before);
      expect(openTaxId(t.ctx.secrets.dataKeys, orderId, row.sealed!)).toBe('423-56-7890');
      expect((await details(orderId)).responsibleParty).toMatchObject({
        lastName: 'King',
        middleName: 'Augusta',
        taxIdLast4: '7890',
      });
      const { rows: history } = await t.ctx.pool.query(
        'SELECT from_status, to_status, actor FROM order_status_history WHERE order_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1',
        [orderId],
      );
      expect(history[0]).toEqual({ from_status: 'exception', to_status: 'pending', actor: 'api' });
      const events = (await tenant.api('GET', `/events?orderId=${orderId}`, undefined, { env })).json().data;
      expect(events[0].data).toMatchObject({ orderId, filingStatus: 'pending' });
      expect(events[0].data).not.toHaveProperty('exceptionCode');

      // A retry with the same key gets the first answer; without it, the order has moved on.
      const replay = await put(party('423-56-7890', { lastName: 'King', middleName: 'Augusta' }), key);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.json()).toEqual(fixed.json());
      expect((await put(party('423-56-7890'))).statusCode).toBe(409);
    }
  });

  it('keeps the request as it was sent: a group that kept no copy keeps the one its orders gave back before (ORD-19)', async () => {
    const orderId = await einWithFormation('512-45-6789', 'test');
    const request = async () =>
      (
        await t.ctx.pool.query(
          'SELECT g.request FROM order_groups g JOIN orders o ON o.group_id = g.id WHERE o.id = $1',
          [orderId],
        )
      ).rows[0].request;
    expect(await request()).toBeNull();
    await move(orderId, 'exception', { exceptionCode: '483' });
    const fixed = await tenant.api('PUT', `/orders/${orderId}/ein-responsible-party`, party('523-45-6780'));
    expect(fixed.statusCode, fixed.body).toBe(200);
    const kept = await request();
    expect(kept.ein.responsibleParty).toMatchObject({ lastName: 'Lovelace', taxIdLast4: '6789' });
    expect(kept.formation.company.legalName).toBe('Acme Holdings LLC');
  });

  it('answers 404 for an order of another environment or another organization, and for an unknown one', async () => {
    const { orderId } = await einForCompany('612-45-6789', 'live');
    await move(orderId, 'exception', { exceptionCode: '483' });
    const stranger = await t.newTenant('Stranger');
    const path = `/orders/${orderId}/ein-responsible-party`;
    expect((await tenant.api('PUT', path, party('623-45-6789'), { env: 'test' })).statusCode).toBe(404);
    expect((await stranger.api('PUT', path, party('623-45-6789'), { env: 'live' })).statusCode).toBe(404);
    expect((await tenant.api('PUT', '/orders/order_nope/ein-responsible-party', party('623-45-6789'))).statusCode).toBe(
      404,
    );
    expect((await taxIdRow(orderId))!.sealed).not.toBeNull();
  });
});

describe('retention (ORD-EIN-9)', () => {
  it('destroys the sealed value TAX_ID_RETENTION_DAYS after the order is filed or cancelled, and a reveal then says when', async () => {
    const filed = (await einForCompany('712-45-6781', 'live')).orderId;
    const cancelled = (await einForCompany('712-45-6782', 'test')).orderId;
    const open = (await einForCompany('712-45-6783', 'live')).orderId;
    await move(filed, 'filed', { ein: '12-3456781' });
    await move(cancelled, 'cancelled');
    const day = 86_400_000;
    expect(await destroyExpiredTaxIds(t.ctx.pool, 30, new Date(Date.now() + 29 * day))).toBe(0);
    for (const id of [filed, cancelled, open]) expect((await taxIdRow(id))!.sealed).not.toBeNull();

    expect(await destroyExpiredTaxIds(t.ctx.pool, 30, new Date(Date.now() + 31 * day))).toBeGreaterThanOrEqual(2);
    for (const id of [filed, cancelled]) {
      const row = (await taxIdRow(id))!;
      expect(row.sealed).toBeNull();
      const today = row.destroyed_at!.toISOString().slice(0, 10);
      await expect(
        revealTaxId(t.ctx, id, { actor: 'cli:test', reason: 'late', clientAddress: 'cli@test' }),
      ).rejects.toThrow(new RegExp(`destroyed on ${today}`));
      expect((await details(id)).responsibleParty.taxIdLast4).toMatch(/^678[12]$/);
    }
    expect((await taxIdRow(open))!.sealed).not.toBeNull();
  });

  it('the daily maintenance job destroys those past TAX_ID_RETENTION_DAYS and no other', async () => {
    const filed = (await einForCompany('812-45-6781', 'live')).orderId;
    const pending = (await einForCompany('812-45-6782', 'live')).orderId;
    await move(filed, 'filed', { ein: '12-3456782' });
    await move(pending, 'pending');
    const ctx = { ...t.ctx, config: { ...t.ctx.config, taxIdRetentionDays: 0 } };
    await purgeExpiredTask.handler(ctx)({}, {} as never);
    expect((await taxIdRow(filed))!.sealed).toBeNull();
    expect((await taxIdRow(pending))!.sealed).not.toBeNull();
  });

  it('`cli orders purge-tax-ids` destroys at once those past retention, prints how many, and changes nothing else', async () => {
    const filed = (await einForCompany('192-45-6781', 'test')).orderId;
    const kept = (await einForCompany('192-45-6782', 'test')).orderId;
    await move(filed, 'filed');
    const { rows: before } = await t.ctx.pool.query(
      'SELECT (SELECT count(*) FROM idempotency_keys) AS keys, (SELECT count(*) FROM orders) AS orders, (SELECT count(*) FROM events) AS events',
    );
    const res = await runCli(t, ['orders', 'purge-tax-ids', '--json'], { TAX_ID_RETENTION_DAYS: '0' });
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out.destroyed).toBeGreaterThanOrEqual(1);
    expect(out.retentionDays).toBe(0);
    expect((await taxIdRow(filed))!.sealed).toBeNull();
    expect((await taxIdRow(kept))!.sealed).not.toBeNull();
    const { rows: after } = await t.ctx.pool.query(
      'SELECT (SELECT count(*) FROM idempotency_keys) AS keys, (SELECT count(*) FROM orders) AS orders, (SELECT count(*) FROM events) AS events',
    );
    expect(after).toEqual(before);
    const text = await runCli(t, ['orders', 'purge-tax-ids'], { TAX_ID_RETENTION_DAYS: '0' });
    expect(text.stdout).toMatch(/^Destroyed 0 tax id\(s\)/);
  }, 180_000);
});

describe('reveals are recorded, append-only (ORD-EIN-7)', () => {
  it('`cli orders reveal-tax-id` prints the number and the SS-4 worksheet and records the reveal; the record cannot change', async () => {
    const orderId = await einWithFormation('213-54-6789', 'test');
    const missing = await runCli(t, ['orders', 'reveal-tax-id', orderId]);
    expect(missing.code).not.toBe(0);
    const res = await runCli(t, ['orders', 'reveal-tax-id', orderId, '--reason', 'IRS online assistant', '--json']);
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out).toMatchObject({ orderId, taxId: '213-54-6789', taxIdType: 'SSN', environment: 'test' });
    const line = (n: string) => out.worksheet.find((l: { line: string }) => l.line === n)?.value;
    expect(line('7b')).toBe('213-54-6789');
    expect(line('7a')).toBe('Ada Lovelace');
    expect(line('1')).toBe('Acme Holdings LLC');
    const { rows } = await t.ctx.pool.query(
      'SELECT id, actor, reason, client_address FROM tax_id_reveals WHERE order_id = $1',
      [orderId],
    );
    expect(rows).toEqual([
      {
        id: out.revealId,
        actor: expect.stringMatching(/^cli:.+/),
        reason: 'IRS online assistant',
        client_address: expect.stringMatching(/^cli@.+/),
      },
    ]);
    await expect(
      t.ctx.pool.query("UPDATE tax_id_reveals SET reason = 'x' WHERE order_id = $1", [orderId]),
    ).rejects.toThrow(/append-only/);
    await expect(t.ctx.pool.query('DELETE FROM tax_id_reveals WHERE order_id = $1', [orderId])).rejects.toThrow(
      /append-only/,
    );
    const { rows: grants } = await t.ctx.pool.query(
      `SELECT has_table_privilege('fcs_service', 'tax_id_reveals', 'SELECT') AS s,
              has_table_privilege('fcs_service', 'tax_id_reveals', 'INSERT') AS i,
              has_table_privilege('fcs_service', 'tax_id_reveals', 'UPDATE') AS u,
              has_table_privilege('fcs_service', 'tax_id_reveals', 'DELETE') AS d`,
    );
    expect(grants[0]).toEqual({ s: true, i: true, u: false, d: false });
  }, 180_000);

  it('refuses an empty reason, a non-EIN order and an order whose tax id was never kept, recording nothing', async () => {
    const orderId = await einWithFormation('214-54-6789', 'test');
    const who = { actor: 'cli:test', reason: '  ', clientAddress: 'cli@test' };
    await expect(revealTaxId(t.ctx, orderId, who)).rejects.toMatchObject({ code: 'validation_error' });
    const formation = (
      await t.ctx.pool.query(
        "SELECT id FROM orders WHERE group_id = (SELECT group_id FROM orders WHERE id = $1) AND order_type = 'formation'",
        [orderId],
      )
    ).rows[0].id;
    await expect(revealTaxId(t.ctx, formation, { ...who, reason: 'x' })).rejects.toMatchObject({ code: 'conflict' });
    await t.ctx.pool.query('DELETE FROM ein_tax_ids WHERE order_id = $1', [orderId]);
    await expect(revealTaxId(t.ctx, orderId, { ...who, reason: 'x' })).rejects.toThrow(/No tax id is kept/);
    expect((await t.ctx.pool.query('SELECT 1 FROM tax_id_reveals WHERE order_id = $1', [orderId])).rowCount).toBe(0);
  });
});

describe('key rotation (SEC-2)', () => {
  it('a tax id sealed under a previous key opens while that key is in DATA_ENCRYPTION_KEY_PREVIOUS, and re-sealing moves it to the current key', async () => {
    const orderId = await einWithFormation('215-54-6789', 'test');
    const oldKey = parseDataKey(TEST_DATA_ENCRYPTION_KEY)!;
    const newKey = parseDataKey(newDataKeyText())!;
    const withKeys = (current: typeof oldKey, previous: Array<typeof oldKey>) => ({
      ...t.ctx,
      secrets: { ...t.ctx.secrets, dataKeys: { current, previous } },
    });
    const who = { actor: 'cli:test', reason: 'rotation check', clientAddress: 'cli@test' };
    await expect(revealTaxId(withKeys(newKey, []), orderId, who)).rejects.toThrow(
      new RegExp(`sealed under key ${oldKey.id}.*DATA_ENCRYPTION_KEY_PREVIOUS`),
    );
    expect((await revealTaxId(withKeys(newKey, [oldKey]), orderId, who)).taxId).toBe('215-54-6789');

    expect(await resealTaxIds(t.ctx.pool, { current: newKey, previous: [oldKey] })).toBeGreaterThanOrEqual(1);
    expect((await taxIdRow(orderId))!.sealed).toMatch(new RegExp(`^sealed:v1:${newKey.id}:`));
    expect((await revealTaxId(withKeys(newKey, []), orderId, who)).taxId).toBe('215-54-6789');
    expect(await resealTaxIds(t.ctx.pool, { current: newKey, previous: [oldKey] })).toBe(0);
    // Back under the suite's key for the other tests of this file.
    expect(await resealTaxIds(t.ctx.pool, { current: oldKey, previous: [newKey] })).toBeGreaterThanOrEqual(1);
    expect((await revealTaxId(t.ctx, orderId, who)).taxId).toBe('215-54-6789');
  });
});

describe('the endpoint in the OpenAPI document', () => {
  it('describes PUT /orders/{orderId}/ein-responsible-party at both addresses, with Idempotency-Key and the dashboard page', async () => {
    for (const base of ['/v1', '/test/v1']) {
      const doc = (await t.app.inject({ method: 'GET', url: `${base}/openapi.json` })).json();
      const op = doc.paths['/orders/{orderId}/ein-responsible-party'].put;
      expect(op.operationId).toBe('correctEinResponsibleParty');
      expect(op.parameters).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ in: 'header', name: 'idempotency-key' }),
          expect.objectContaining({ in: 'path', name: 'orderId' }),
        ]),
      );
      expect(JSON.stringify(op.requestBody)).toContain('EinResponsibleParty');
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '404', '409', '422']));
      expect(op.description).toContain('/responsible-party');
      expect(op.description).toMatch(/483[\s\S]*484/);
    }
  });
});

/**
 * The database as a backup would hold it: `pg_dump` when its major version matches the server's, else (the embedded
 * PostgreSQL is newer than the system's client tools, which refuse it) every row of every table as text, which is
 * what a plain dump holds of the data.
 */
async function databaseDump(databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const serverMajor = Number((await client.query('SHOW server_version_num')).rows[0].server_version_num) / 10_000;
    const clientMajor = await run('pg_dump', ['--version']).then(
      ({ stdout }) => Number(/(\d+)\./.exec(stdout)?.[1]),
      () => 0,
    );
    if (Math.floor(serverMajor) === clientMajor) {
      return (await run('pg_dump', ['--no-owner', databaseUrl], { maxBuffer: 512 * 1024 * 1024 })).stdout;
    }
    const { rows: tables } = await client.query<{ name: string }>(
      `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables
        WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`,
    );
    const parts: string[] = [];
    for (const { name } of tables) {
      const { rows } = await client.query(`SELECT coalesce(string_agg(t::text, E'\\n'), '') AS text FROM ${name} t`);
      parts.push(`-- ${name}\n${rows[0].text}`);
    }
    return parts.join('\n');
  } finally {
    await client.end();
  }
}
