import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { keptDataKey, newDataKeyText, parseDataKey, type Keyring } from '../src/lib/secret-box.js';
import { openTaxId, resealTaxIds } from '../src/modules/orders/ein-tax-ids.js';
import { resealEndpointSecrets, signingSecrets } from '../src/modules/webhooks/endpoint-secrets.js';
import { runCli } from './cli-runner.js';
import { createUser } from './factories.js';
import { createTestApp, TEST_DATA_ENCRYPTION_KEY, type TestApp, type TestTenant } from './harness.js';
import { einObject, formationBody, TEST_SSN } from './orders-fixtures.js';

let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.newTenant('Sealed Co');
});
afterAll(() => t.close());

const cli = (env: Record<string, string>, ...args: string[]) => runCli(t, args, env);

async function createEndpoint(headers: Record<string, string> = {}): Promise<{ id: string; secret: string }> {
  const res = await tenant.api(
    'POST',
    '/webhook-endpoints',
    { url: 'https://hooks.example.com/in', eventTypes: ['document.uploaded'] },
    { headers },
  );
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** Places an EIN order (with a formation) in the test environment; its tax id is sealed (ORD-EIN-6). @returns its id. */
async function placeEinOrder(): Promise<string> {
  await tenant.api('POST', '/test_helpers/balance-credits', { amount: 5000 });
  const user = await createUser(tenant);
  const res = await tenant.api('POST', '/orders', formationBody(user.id, 'WY', { extra: { ein: einObject() } }));
  expect(res.statusCode, res.body).toBe(201);
  return res.json().items.find((i: { orderType: string }) => i.orderType === 'ein').orderId;
}

/** Every table and column of every schema of the database (ours and graphile-worker's), scanned for `needle`. */
async function rowsContaining(needle: string): Promise<string[]> {
  const { rows: tables } = await t.ctx.pool.query<{ s: string; t: string }>(
    `SELECT table_schema AS s, table_name AS t FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
  );
  expect(tables.map((r) => r.t)).toContain('webhook_endpoints');
  const found: string[] = [];
  for (const { s, t: table } of tables) {
    const { rows } = await t.ctx.pool.query(
      `SELECT count(*)::int AS n FROM "${s}"."${table}" x WHERE x::text LIKE $1`,
      [`%${needle}%`],
    );
    if (rows[0].n) found.push(`${s}.${table}`);
  }
  return found;
}

const storedSecrets = async (id: string) =>
  (
    await t.ctx.pool.query<{ secret: string; previous_secret: string | null; previous_secret_expires_at: Date | null }>(
      'SELECT secret, previous_secret, previous_secret_expires_at FROM webhook_endpoints WHERE id = $1',
      [id],
    )
  ).rows[0]!;

describe('webhook signing secrets at rest', () => {
  it('no table or column of the database holds a whsec_ secret in clear, the rotated-out one and idempotent replays included', async () => {
    const plain = await createEndpoint();
    const replayed = await createEndpoint({ 'idempotency-key': `sealed-${Date.now()}` });
    const rotated = await tenant.api('POST', `/webhook-endpoints/${plain.id}/rotate-secret`);
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.json().secret).toMatch(/^whsec_/);
    expect(await rowsContaining('whsec_')).toEqual([]);
    for (const secret of [plain.secret, replayed.secret, rotated.json().secret])
      expect(await rowsContaining(secret.slice(6))).toEqual([]);
  });

  it('the stored values open, with the endpoint id, to the secrets the API showed; the replaced one only during its grace', async () => {
    const ep = await createEndpoint();
    const next = (await tenant.api('POST', `/webhook-endpoints/${ep.id}/rotate-secret`)).json().secret as string;
    const row = await storedSecrets(ep.id);
    expect(row.secret).toMatch(/^sealed:v1:[0-9a-f]{16}:/);
    const e = {
      endpointId: ep.id,
      secret: row.secret,
      previousSecret: row.previous_secret,
      previousSecretExpiresAt: row.previous_secret_expires_at,
    };
    expect(signingSecrets(t.ctx, e, new Date())).toEqual([next, ep.secret]);
    expect(signingSecrets(t.ctx, e, new Date(Date.now() + 25 * 3600_000))).toEqual([next]);
    // Copied onto another endpoint's row, a sealed secret does not open (the endpoint id is its associated data).
    const other = await createEndpoint();
    expect(() => signingSecrets(t.ctx, { ...e, endpointId: other.id }, new Date())).toThrow(/does not open/);
    const otherKeys: Keyring = { current: parseDataKey(newDataKeyText())!, previous: [] };
    expect(() => signingSecrets({ secrets: { ...t.ctx.secrets, dataKeys: otherKeys } }, e, new Date())).toThrow(
      /DATA_ENCRYPTION_KEY/,
    );
  });

  it('secrets stored in clear before sealing existed are sealed by the next start', async () => {
    const ep = await createEndpoint();
    await t.ctx.pool.query("UPDATE webhook_endpoints SET secret = 'whsec_legacyplaintext0123456789' WHERE id = $1", [
      ep.id,
    ]);
    expect(
      signingSecrets(
        t.ctx,
        {
          endpointId: ep.id,
          secret: 'whsec_legacyplaintext0123456789',
          previousSecret: null,
          previousSecretExpiresAt: null,
        },
        new Date(),
      ),
    ).toEqual(['whsec_legacyplaintext0123456789']);
    const res = await cli({}, 'secrets', 'status', '--json');
    expect(res.code, res.stderr).toBe(0);
    const row = await storedSecrets(ep.id);
    expect(row.secret).toMatch(/^sealed:v1:/);
    expect(
      signingSecrets(
        t.ctx,
        { endpointId: ep.id, secret: row.secret, previousSecret: null, previousSecretExpiresAt: null },
        new Date(),
      ),
    ).toEqual(['whsec_legacyplaintext0123456789']);
    expect(await rowsContaining('whsec_')).toEqual([]);
  });

  it('`secrets rotate-key` re-seals every secret and EIN tax id under the new key; the old key is then no longer needed', async () => {
    const ep = await createEndpoint();
    const einOrderId = await placeEinOrder();
    const next = (await tenant.api('POST', `/webhook-endpoints/${ep.id}/rotate-secret`)).json().secret as string;
    const newKey = newDataKeyText();
    const res = await cli(
      { DATA_ENCRYPTION_KEY: newKey, DATA_ENCRYPTION_KEY_PREVIOUS: TEST_DATA_ENCRYPTION_KEY },
      'secrets',
      'rotate-key',
      '--json',
    );
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout);
    const newId = parseDataKey(newKey)!.id;
    expect(out.currentKeyId).toBe(newId);
    expect(out.resealedEndpoints).toBeGreaterThanOrEqual(1);
    expect(Object.keys(out.secretsByKeyId)).toEqual([newId]);
    // ORD-EIN-6: the sealed tax ids move to the new key with the secrets.
    expect(out.resealedTaxIds).toBe(1);
    expect(out.taxIdsByKeyId).toEqual({ [newId]: 1 });
    const { rows: taxIds } = await t.ctx.pool.query('SELECT sealed FROM ein_tax_ids WHERE order_id = $1', [einOrderId]);
    expect(openTaxId({ current: parseDataKey(newKey)!, previous: [] }, einOrderId, taxIds[0].sealed)).toBe(TEST_SSN);
    const row = await storedSecrets(ep.id);
    const onlyNewKey = { secrets: { ...t.ctx.secrets, dataKeys: { current: parseDataKey(newKey)!, previous: [] } } };
    expect(
      signingSecrets(
        onlyNewKey,
        {
          endpointId: ep.id,
          secret: row.secret,
          previousSecret: row.previous_secret,
          previousSecretExpiresAt: row.previous_secret_expires_at,
        },
        new Date(),
      ),
    ).toEqual([next, ep.secret]);
    // Back under the suite's key, so the other tests of this file keep working; running it twice changes nothing.
    const back = { current: parseDataKey(TEST_DATA_ENCRYPTION_KEY)!, previous: [parseDataKey(newKey)!] };
    expect((await resealEndpointSecrets(t.ctx.pool, back)).resealed).toBeGreaterThanOrEqual(1);
    expect((await resealEndpointSecrets(t.ctx.pool, back)).resealed).toBe(0);
    expect(await resealTaxIds(t.ctx.pool, back)).toBe(1);
  });
});

describe('DATA_ENCRYPTION_KEY', () => {
  it('is required with DATABASE_URL: the start stops with one message naming the variable and how to make a key', () => {
    let err: unknown;
    try {
      loadConfig({ DATABASE_URL: 'postgres://app@db.internal/fcs' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      expect.stringMatching(/^DATA_ENCRYPTION_KEY: required when DATABASE_URL is set.*openssl rand -base64 32/),
    ]);
  });

  it('takes 32 bytes as base64 or hex, and refuses anything else without printing it', () => {
    const hex = 'ab'.repeat(32);
    expect(loadConfig({ DATA_ENCRYPTION_KEY: hex }).dataEncryptionKey?.key).toEqual(Buffer.from(hex, 'hex'));
    expect(loadConfig({ DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY }).dataEncryptionKey?.key.length).toBe(32);
    for (const bad of ['too-short-key-material', 'ab'.repeat(31), Buffer.alloc(16, 7).toString('base64')]) {
      expect(() => loadConfig({ DATA_ENCRYPTION_KEY: bad })).toThrow(/DATA_ENCRYPTION_KEY: must be 32 bytes/);
      try {
        loadConfig({ DATA_ENCRYPTION_KEY: bad });
      } catch (e) {
        expect((e as Error).message).not.toContain(bad);
      }
    }
    expect(() =>
      loadConfig({ DATA_ENCRYPTION_KEY: hex, DATA_ENCRYPTION_KEY_PREVIOUS: `${TEST_DATA_ENCRYPTION_KEY},nope` }),
    ).toThrow(/DATA_ENCRYPTION_KEY_PREVIOUS/);
  });

  it('on the embedded default is generated once into the data directory, readable only by its owner', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fcs-key-'));
    expect(loadConfig({ DATA_DIR: dir }).dataEncryptionKey).toBeNull();
    const first = keptDataKey(dir);
    const file = path.join(dir, 'data-encryption-key');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(keptDataKey(dir).id).toBe(first.id);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
