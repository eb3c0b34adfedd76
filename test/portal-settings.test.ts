import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Environment } from '../src/context.js';
import { fakeDns } from './domain-helpers.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { listPrice, wholesale } from './orders-fixtures.js';
import { memberSession, type PortalClient, setProofAge } from './portal-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** Switches the client to `environment`; with `memberId`, as a member who just gave the second factor (PORTAL-10). */
async function switchTo(client: PortalClient, environment: Environment, memberId?: string) {
  await client.get('/portal/');
  expect((await client.post('/portal/environment', { _csrf: client.csrf(), environment })).statusCode).toBe(303);
  if (memberId) await setProofAge(t, memberId, 0);
}

/** The API's retail price of a product in an environment (dollars, null: the list price applies). */
async function apiRetail(tenant: TestTenant, type: string, env: Environment): Promise<number | null> {
  const res = await tenant.api('GET', '/organization/prices', undefined, { env });
  return res.json().data.find((p: { type: string }) => p.type === type).retailAmount;
}

/** The wholesale, retail and margin cells of a product's row on the prices page. */
function priceRow(html: string, type: string) {
  const row = new RegExp(`<tr data-price="${type}">([\\s\\S]*?)</tr>`).exec(html)![1]!;
  const cell = (name: string) => new RegExp(`<td class="num" data-${name}>([^<]+)`).exec(row)![1]!.trim();
  return { wholesale: cell('wholesale'), retail: cell('retail'), margin: cell('margin'), row };
}

const money = (cents: number) => `$${(cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2 })}`;

describe('portal retail prices', () => {
  it('shows wholesale, retail and margin, and changes only the environment shown', async () => {
    const tenant = await t.newTenant('Prices Co');
    const { client, memberId } = await memberSession(t, tenant.organizationId, 'admin');
    const page = await client.get('/portal/prices');
    expect(page.statusCode).toBe(200);
    const before = priceRow(page.body, 'formation_tier_1');
    expect(before.wholesale).toBe(money(wholesale('formation_tier_1')));
    expect(before.retail).toBe(money(listPrice('formation_tier_1')));
    expect(before.margin).toBe(money(listPrice('formation_tier_1') - wholesale('formation_tier_1')));

    const retail = wholesale('formation_tier_1') / 100 + 40;
    const saved = await client.post('/portal/prices/formation_tier_1', {
      _csrf: client.csrf(),
      retailAmount: String(retail),
    });
    expect(saved.statusCode).toBe(303);
    expect(saved.headers.location).toBe('/portal/prices');
    const after = priceRow((await client.get('/portal/prices')).body, 'formation_tier_1');
    expect(after.retail).toBe(money(retail * 100));
    expect(after.margin).toBe('$40.00');
    // Test mode: the test price changed, live did not.
    expect(await apiRetail(tenant, 'formation_tier_1', 'test')).toBe(retail);
    expect(await apiRetail(tenant, 'formation_tier_1', 'live')).toBeNull();

    await switchTo(client, 'live', memberId);
    const livePage = await client.get('/portal/prices');
    expect(livePage.body).toContain('These are your <strong>live</strong> prices');
    expect(priceRow(livePage.body, 'formation_tier_1').retail).toBe(money(listPrice('formation_tier_1')));
    await client.post('/portal/prices/formation_tier_1', { _csrf: client.csrf(), retailAmount: String(retail + 10) });
    expect(await apiRetail(tenant, 'formation_tier_1', 'live')).toBe(retail + 10);
    expect(await apiRetail(tenant, 'formation_tier_1', 'test')).toBe(retail);

    // Back to the list price, in live only.
    const reverted = await client.post('/portal/prices/formation_tier_1/revert', { _csrf: client.csrf() });
    expect(reverted.statusCode).toBe(303);
    expect(await apiRetail(tenant, 'formation_tier_1', 'live')).toBeNull();
    expect(await apiRetail(tenant, 'formation_tier_1', 'test')).toBe(retail);
  });

  it('refuses a price below the wholesale floor or not in whole dollars, naming the field beside it', async () => {
    const tenant = await t.newTenant('Floor Co');
    const { client } = await memberSession(t, tenant.organizationId, 'owner');
    await client.get('/portal/prices');
    const below = String(wholesale('registered_agent') / 100 - 1);
    const res = await client.post('/portal/prices/registered_agent', { _csrf: client.csrf(), retailAmount: below });
    expect(res.statusCode).toBe(400);
    const { row } = priceRow(res.body, 'registered_agent');
    expect(row).toContain('aria-describedby="err-registered_agent"');
    expect(row).toMatch(
      /<p class="field-error" id="err-registered_agent" role="alert">retailAmount [^<]*below the wholesale floor/,
    );
    expect(row).toContain(`value="${below}"`);
    expect(await apiRetail(tenant, 'registered_agent', 'test')).toBeNull();

    const cents = await client.post('/portal/prices/registered_agent', {
      _csrf: client.csrf(),
      retailAmount: '500.50',
    });
    expect(cents.statusCode).toBe(400);
    expect(priceRow(cents.body, 'registered_agent').row).toMatch(
      /id="err-registered_agent" role="alert">[^<]*retailAmount/,
    );
    const words = await client.post('/portal/prices/registered_agent', { _csrf: client.csrf(), retailAmount: 'lots' });
    expect(words.statusCode).toBe(400);
    expect(words.body).toContain('retailAmount');
    expect(await apiRetail(tenant, 'registered_agent', 'test')).toBeNull();
    // Without the session's CSRF token nothing is changed.
    const forged = await client.post('/portal/prices/registered_agent', { retailAmount: '900' });
    expect(forged.statusCode).toBe(403);
    expect(await apiRetail(tenant, 'registered_agent', 'test')).toBeNull();
  });
});

describe('portal branding and white-label domain', () => {
  it('changes branding only in live, for owners and admins, through the API’s validations', async () => {
    const tenant = await t.newTenant('Brand Co');
    const { client, memberId } = await memberSession(t, tenant.organizationId, 'owner');
    const testPage = await client.get('/portal/branding');
    expect(testPage.statusCode).toBe(200);
    expect(testPage.body).toContain('switch to Live to change the branding');
    const inTest = await client.post('/portal/branding', { _csrf: client.csrf(), primaryColor: '#112233' });
    expect(inTest.statusCode).toBe(403);
    expect(inTest.body).toContain('switch to Live');
    const org = () => tenant.api('GET', '/organization', undefined, { env: 'live' }).then((r) => r.json());
    expect((await org()).branding.primaryColor).toBeNull();

    await switchTo(client, 'live', memberId);
    await client.get('/portal/branding');
    const bad = await client.post('/portal/branding', {
      _csrf: client.csrf(),
      logoUrl: 'http://insecure.example.com/logo.png',
      primaryColor: 'blue',
      accentColor: '',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toMatch(/id="err-branding.primaryColor">primaryColor: /);
    expect(bad.body).toContain('value="blue"');
    expect((await org()).branding.primaryColor).toBeNull();
    const schemeBad = await client.post('/portal/branding', {
      _csrf: client.csrf(),
      logoUrl: 'http://insecure.example.com/logo.png',
      primaryColor: '#112233',
      accentColor: '',
    });
    expect(schemeBad.statusCode).toBe(400);
    expect(schemeBad.body).toMatch(/id="err-branding.logoUrl">logoUrl: must be an https URL/);

    const ok = await client.post('/portal/branding', {
      _csrf: client.csrf(),
      logoUrl: 'https://brand.example.com/logo.png',
      primaryColor: '#112233',
      accentColor: '#ABCDEF',
    });
    expect(ok.statusCode).toBe(303);
    expect((await org()).branding).toEqual({
      logoUrl: 'https://brand.example.com/logo.png',
      primaryColor: '#112233',
      accentColor: '#abcdef',
    });

    for (const role of ['developer', 'viewer'] as const) {
      const other = await memberSession(t, tenant.organizationId, role);
      await switchTo(other.client, 'live');
      const page = await other.client.get('/portal/branding');
      expect(page.statusCode).toBe(200);
      // The values as text, no form to change them.
      expect(page.body).toContain('<dt>Primary colour</dt><dd>#112233</dd>');
      expect(page.body).not.toContain('name="primaryColor"');
      expect(page.body).not.toContain('Save branding');
      const res = await other.client.post('/portal/branding', { _csrf: other.client.csrf(), primaryColor: '#000000' });
      expect(res.statusCode).toBe(403);
      const verify = await other.client.post('/portal/branding/domain/verify', { _csrf: other.client.csrf() });
      expect(verify.statusCode).toBe(403);
    }
    expect((await org()).branding.primaryColor).toBe('#112233');
  });

  it('requests a domain, shows its TXT record and verifies it on demand', async () => {
    const dns = fakeDns(t);
    const tenant = await t.newTenant('Domain Co');
    const { client, memberId } = await memberSession(t, tenant.organizationId, 'admin');
    await switchTo(client, 'live', memberId);
    await client.get('/portal/branding');
    const domain = `portal-${Date.now().toString(36)}.example.com`;
    expect(
      (await client.post('/portal/branding/domain', { _csrf: client.csrf(), whiteLabelDomain: domain })).statusCode,
    ).toBe(303);
    const pending = await client.get('/portal/branding');
    const verification = (await tenant.api('GET', '/organization', undefined, { env: 'live' })).json()
      .whiteLabelDomainVerification;
    expect(verification.status).toBe('pending');
    expect(pending.body).toContain(`<code>${verification.recordName}</code>`);
    expect(pending.body).toContain(`<code data-record-value>${verification.recordValue}</code>`);
    expect(pending.body).toContain('Verify now');

    const early = await client.post('/portal/branding/domain/verify', { _csrf: client.csrf() });
    expect(early.statusCode).toBe(409);
    expect(early.body).toContain(
      `id="err-whiteLabelDomain">whiteLabelDomain: needs the TXT record ${verification.recordName}`,
    );

    dns.publish(verification.recordName, verification.recordValue);
    const verified = await client.post('/portal/branding/domain/verify', { _csrf: client.csrf() });
    expect(verified.statusCode).toBe(303);
    const after = (await tenant.api('GET', '/organization', undefined, { env: 'live' })).json();
    expect(after.whiteLabelDomainVerification.status).toBe('verified');
    const page = await client.get('/portal/branding');
    expect(page.body).toMatch(/data-domain-status>Verified/);
    expect(page.body).not.toContain('Verify now');

    const ours = await client.post('/portal/branding/domain', { _csrf: client.csrf(), whiteLabelDomain: 'localhost' });
    expect(ours.statusCode).toBe(400);
    expect(ours.body).toContain('id="err-whiteLabelDomain"');
    expect((await tenant.api('GET', '/organization', undefined, { env: 'live' })).json().whiteLabelDomain).toBe(domain);
  });
});
