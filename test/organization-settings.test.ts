import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TXT_LOOKUP_TIMEOUT_MS } from '../src/modules/organizations/domain-verification.js';
import { createTestApp, type TestApp } from './harness.js';
import { fakeDns, setVerifiedDomain } from './domain-helpers.js';
import { createUser } from './factories.js';
import { mintLink } from './dashboard-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const fields = (res: { json: () => any }) => (res.json().errors ?? []).map((e: { field: string }) => e.field);

describe('PATCH /organization', () => {
  it('changes only the fields sent, merges branding, and shows the change in both environments', async () => {
    const tenant = await t.newTenant('Settings Co');
    const res = await tenant.api(
      'PATCH',
      '/organization',
      {
        name: 'Settings Company',
        whiteLabelDomain: 'Portal.Settings-Co.test',
        emailNotifications: false,
        dashboardBilling: 'customer',
        branding: { logoUrl: 'https://cdn.settings.test/logo.png', primaryColor: '#1A2B3C' },
      },
      { env: 'live' },
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      id: tenant.organizationId,
      environment: 'live',
      name: 'Settings Company',
      whiteLabelDomain: 'portal.settings-co.test',
      emailNotifications: false,
      dashboardBilling: 'customer',
      branding: { logoUrl: 'https://cdn.settings.test/logo.png', primaryColor: '#1a2b3c', accentColor: null },
    });

    const second = await tenant.api(
      'PATCH',
      '/organization',
      { branding: { accentColor: '#00aa55', logoUrl: null } },
      { env: 'live' },
    );
    expect(second.json().branding).toEqual({ logoUrl: null, primaryColor: '#1a2b3c', accentColor: '#00aa55' });
    expect(second.json()).toMatchObject({
      name: 'Settings Company',
      dashboardBilling: 'customer',
      whiteLabelDomain: 'portal.settings-co.test',
    });

    const test = await tenant.api('GET', '/organization');
    expect(test.json()).toMatchObject({ environment: 'test', name: 'Settings Company', dashboardBilling: 'customer' });

    const cleared = await tenant.api('PATCH', '/organization', { whiteLabelDomain: null }, { env: 'live' });
    expect(cleared.json().whiteLabelDomain).toBeNull();
  });

  it('refuses a white-label domain that is not a bare host name, naming the field', async () => {
    const tenant = await t.newTenant();
    for (const whiteLabelDomain of [
      'https://portal.example.com',
      'portal.example.com:8443',
      'portal.example.com/x',
      'no spaces.example.com',
      '10.0.0.1',
      'localhost',
      'example',
    ]) {
      const res = await tenant.api('PATCH', '/organization', { whiteLabelDomain }, { env: 'live' });
      expect(res.statusCode, whiteLabelDomain).toBe(400);
      expect(fields(res), whiteLabelDomain).toContain('whiteLabelDomain');
    }
  });

  it('answers 409 when another organization holds the domain verified', async () => {
    const a = await t.newTenant();
    const b = await t.newTenant();
    await setVerifiedDomain(t, a, 'taken.example.test');
    const res = await b.api('PATCH', '/organization', { whiteLabelDomain: 'TAKEN.example.test' }, { env: 'live' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'conflict', errors: [{ field: 'whiteLabelDomain' }] });
    const again = await a.api('PATCH', '/organization', { whiteLabelDomain: 'taken.example.test' }, { env: 'live' });
    expect(again.statusCode).toBe(200);
    expect(again.json().whiteLabelDomainVerification.status).toBe('verified');
  });

  it('validates branding, billing mode, name and unknown fields', async () => {
    const tenant = await t.newTenant();
    const res = await tenant.api(
      'PATCH',
      '/organization',
      { branding: { logoUrl: 'http://insecure.test/logo.png', primaryColor: 'blue', accentColor: '#12345' } },
      { env: 'live' },
    );
    expect(res.statusCode).toBe(400);
    expect(fields(res)).toEqual(expect.arrayContaining(['branding.primaryColor', 'branding.accentColor']));
    const logo = await tenant.api(
      'PATCH',
      '/organization',
      { branding: { logoUrl: 'http://insecure.test/logo.png' } },
      { env: 'live' },
    );
    expect(fields(logo)).toEqual(['branding.logoUrl']);
    expect(
      fields(await tenant.api('PATCH', '/organization', { dashboardBilling: 'customers' }, { env: 'live' })),
    ).toContain('dashboardBilling');
    expect(fields(await tenant.api('PATCH', '/organization', { name: '' }, { env: 'live' }))).toContain('name');
    expect(fields(await tenant.api('PATCH', '/organization', { balance: 100 }, { env: 'live' }))).toContain('balance');
    expect((await tenant.api('GET', '/organization')).json().dashboardBilling).toBe('organization');
  });

  it('sets, shows and removes the technical contact email, and refuses one that is not an email address', async () => {
    const tenant = await t.newTenant();
    expect((await tenant.api('GET', '/organization')).json().contactEmail).toBeNull();
    const set = await tenant.api(
      'PATCH',
      '/organization',
      { contactEmail: 'dev-alerts@platform.example' },
      { env: 'live' },
    );
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().contactEmail).toBe('dev-alerts@platform.example');
    expect((await tenant.api('GET', '/organization', undefined, { env: 'live' })).json().contactEmail).toBe(
      'dev-alerts@platform.example',
    );

    for (const contactEmail of [
      'not-an-email',
      'dev@',
      '@platform.example',
      'two@at@platform.example',
      'dev alerts@platform.example',
      42,
    ]) {
      const bad = await tenant.api('PATCH', '/organization', { contactEmail }, { env: 'live' });
      expect(bad.statusCode, String(contactEmail)).toBe(400);
      expect(bad.json().code).toBe('validation_error');
      expect(fields(bad), String(contactEmail)).toContain('contactEmail');
      expect(bad.json().message).toContain('contactEmail');
    }
    // A refused request changes nothing, not even the other fields sent with it.
    expect(
      (await tenant.api('PATCH', '/organization', { name: 'Renamed', contactEmail: 'nope' }, { env: 'live' }))
        .statusCode,
    ).toBe(400);
    // One specific error for the nullable field, not the union's "must be null" / "anyOf" noise.
    expect(
      (await tenant.api('PATCH', '/organization', { contactEmail: 'nope' }, { env: 'live' })).json().errors,
    ).toEqual([{ field: 'contactEmail', message: 'must be an email address, e.g. dev-alerts@example.com' }]);
    expect((await tenant.api('GET', '/organization')).json()).toMatchObject({
      name: 'Test Org',
      contactEmail: 'dev-alerts@platform.example',
    });

    const cleared = await tenant.api('PATCH', '/organization', { contactEmail: null }, { env: 'live' });
    expect(cleared.json().contactEmail).toBeNull();
    // ORG-3: trimmed, and an empty string removes it as null does.
    const spaced = await tenant.api('PATCH', '/organization', { contactEmail: '  Ops@Example.com ' }, { env: 'live' });
    expect(spaced.statusCode, spaced.body).toBe(200);
    expect(spaced.json().contactEmail).toBe('Ops@Example.com');
    const emptied = await tenant.api('PATCH', '/organization', { contactEmail: '' }, { env: 'live' });
    expect(emptied.statusCode, emptied.body).toBe(200);
    expect(emptied.json().contactEmail).toBeNull();
  });

  it("names every bad field in one 400, the schema's and the rules' alike (API-7)", async () => {
    const tenant = await t.newTenant();
    const res = await tenant.api(
      'PATCH',
      '/organization',
      { name: '   ', branding: { logoUrl: 'http://cdn.example/logo.png', primaryColor: 'red', extra: 1 } },
      { env: 'live' },
    );
    expect(res.statusCode).toBe(400);
    expect(new Set(fields(res))).toEqual(
      new Set(['branding.extra', 'branding.primaryColor', 'branding.logoUrl', 'name']),
    );
  });

  it('changes nothing, updatedAt included, for a body that sets nothing, from a test key as from a live one', async () => {
    const tenant = await t.newTenant();
    const before = (await tenant.api('GET', '/organization', undefined, { env: 'live' })).json();
    for (const env of ['test', 'live'] as const) {
      const res = await tenant.api('PATCH', '/organization', {}, { env });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().updatedAt).toBe(before.updatedAt);
    }
  });
});

describe('environments: settings change only with a live key', () => {
  const LIVE_AFFECTING = {
    whiteLabelDomain: 'evil.example',
    dashboardBilling: 'customer',
    branding: { primaryColor: '#ff0000', logoUrl: 'https://evil.example/logo.png' },
    contactEmail: 'attacker@evil.example',
    emailNotifications: false,
    name: 'Evil Corp',
  } as const;

  it('refuses every live-affecting field sent with a test key with 403 naming the live base address, and live customers see nothing changed', async () => {
    const tenant = await t.newTenant('Careful Co');
    const before = (await tenant.api('GET', '/organization', undefined, { env: 'live' })).json();
    for (const [field, value] of Object.entries(LIVE_AFFECTING)) {
      const res = await tenant.api('PATCH', '/organization', { [field]: value });
      expect(res.statusCode, `${field}: ${res.body}`).toBe(403);
      expect(res.json().code).toBe('forbidden');
      expect(res.json().message).toContain(`${t.ctx.config.liveBaseUrl}/organization`);
      expect(fields(res)).toEqual([field]);
    }
    expect((await tenant.api('PATCH', '/organization', LIVE_AFFECTING)).statusCode).toBe(403);
    const verify = await tenant.api('POST', '/organization/white-label-domain/verify');
    expect(verify.statusCode).toBe(403);
    expect(verify.json().message).toContain(t.ctx.config.liveBaseUrl);

    const after = (await tenant.api('GET', '/organization', undefined, { env: 'live' })).json();
    expect(after).toEqual(before);
    // A live customer's sign-in link still points at the default dashboard address.
    const user = await createUser(tenant, 'live');
    expect(await mintLink(tenant, { userId: user.id }, 'live')).toMatch(/^http:\/\/localhost:3000\/dashboard\/auth\//);
  });

  it('lets a test key read the organization and send an empty body, and a live key change what the test key may not', async () => {
    const tenant = await t.newTenant('Both Co');
    const read = await tenant.api('GET', '/organization');
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ environment: 'test', name: 'Both Co' });
    const empty = await tenant.api('PATCH', '/organization', {});
    expect(empty.statusCode, empty.body).toBe(200);
    expect(empty.json()).toMatchObject({ environment: 'test', name: 'Both Co' });

    const live = await tenant.api(
      'PATCH',
      '/organization',
      { dashboardBilling: 'customer', emailNotifications: false, contactEmail: 'ops@both.example' },
      { env: 'live' },
    );
    expect(live.statusCode, live.body).toBe(200);
    // One set of settings: the test environment sees what the live key set.
    expect((await tenant.api('GET', '/organization')).json()).toMatchObject({
      dashboardBilling: 'customer',
      emailNotifications: false,
      contactEmail: 'ops@both.example',
    });
    // Test-environment prices stay the test key's own business.
    const price = await tenant.api('PUT', '/organization/prices/ein', { retailAmount: 150 });
    expect(price.statusCode, price.body).toBe(200);
  });
});

describe('white-label domain verification', () => {
  it('keeps a new domain pending with a TXT challenge, out of magic links, until the record is found', async () => {
    const dns = fakeDns(t);
    const tenant = await t.newTenant('Pending Co');
    const set = await tenant.api(
      'PATCH',
      '/organization',
      { whiteLabelDomain: 'portal.pending-co.test' },
      { env: 'live' },
    );
    expect(set.statusCode, set.body).toBe(200);
    const challenge = set.json().whiteLabelDomainVerification;
    expect(challenge).toMatchObject({
      status: 'pending',
      recordType: 'TXT',
      recordName: '_fcs-domain-verification.portal.pending-co.test',
      verifiedAt: null,
    });
    expect(challenge.recordValue).toMatch(/^fcs-domain-verification=[A-Za-z0-9_-]{32}$/);

    const user = await createUser(tenant, 'live');
    expect(await mintLink(tenant, { userId: user.id }, 'live')).toMatch(/^http:\/\/localhost:3000\/dashboard\/auth\//);
    expect(
      (await t.app.inject({ method: 'GET', url: '/', headers: { host: 'portal.pending-co.test' } })).statusCode,
    ).toBe(404);

    const missing = await tenant.api('POST', '/organization/white-label-domain/verify', undefined, { env: 'live' });
    expect(missing.statusCode).toBe(409);
    expect(missing.json().code).toBe('domain_not_verified');
    expect(missing.json().message).toContain(challenge.recordName);
    expect(missing.json().message).toContain(challenge.recordValue);
    dns.publish(challenge.recordName, 'fcs-domain-verification=someone-elses-token');
    expect(
      (await tenant.api('POST', '/organization/white-label-domain/verify', undefined, { env: 'live' })).json().code,
    ).toBe('domain_not_verified');

    dns.publish(challenge.recordName, challenge.recordValue);
    const verified = await tenant.api('POST', '/organization/white-label-domain/verify', undefined, { env: 'live' });
    expect(verified.statusCode, verified.body).toBe(200);
    expect(verified.json().whiteLabelDomainVerification).toMatchObject({
      status: 'verified',
      verifiedAt: expect.any(String),
    });
    expect(await mintLink(tenant, { userId: user.id }, 'live')).toMatch(/^https:\/\/portal\.pending-co\.test\/auth\//);
    // Sending the same domain again keeps it verified; another domain starts over.
    expect(
      (
        await tenant.api('PATCH', '/organization', { whiteLabelDomain: 'portal.pending-co.test' }, { env: 'live' })
      ).json().whiteLabelDomainVerification.status,
    ).toBe('verified');
    const moved = await tenant.api(
      'PATCH',
      '/organization',
      { whiteLabelDomain: 'other.pending-co.test' },
      { env: 'live' },
    );
    expect(moved.json().whiteLabelDomainVerification).toMatchObject({ status: 'pending' });
    expect(moved.json().whiteLabelDomainVerification.recordValue).not.toBe(challenge.recordValue);
    expect(await mintLink(tenant, { userId: user.id }, 'live')).toMatch(/^http:\/\/localhost:3000\/dashboard\/auth\//);
  });

  it('lets several organizations claim a domain but only one hold it, guarded by the database', async () => {
    const dns = fakeDns(t);
    const owner = await t.newTenant('Owner Co');
    const squatter = await t.newTenant('Squatter Co');
    const claim = await squatter.api(
      'PATCH',
      '/organization',
      { whiteLabelDomain: 'portal.owner-co.test' },
      { env: 'live' },
    );
    expect(claim.statusCode).toBe(200);
    // The squatter's pending claim does not block the owner, whose record proves control.
    await setVerifiedDomain(t, owner, 'portal.owner-co.test', dns);
    // The owner's record does not verify the squatter (its token differs), and a verified domain is never shared.
    const stolen = await squatter.api('POST', '/organization/white-label-domain/verify', undefined, { env: 'live' });
    expect(stolen.statusCode).toBe(409);
    dns.publish(
      claim.json().whiteLabelDomainVerification.recordName,
      claim.json().whiteLabelDomainVerification.recordValue,
    );
    const second = await squatter.api('POST', '/organization/white-label-domain/verify', undefined, { env: 'live' });
    expect(second.statusCode).toBe(409);
    expect(second.json()).toMatchObject({ code: 'conflict', errors: [{ field: 'whiteLabelDomain' }] });
    await expect(
      t.ctx.pool.query(
        `UPDATE organizations SET white_label_domain = 'portal.owner-co.test', white_label_domain_verified_at = now() WHERE id = $1`,
        [squatter.organizationId],
      ),
    ).rejects.toMatchObject({ code: '23505' });
  });

  it('answers 409 to verify without a requested domain, and 503 when DNS fails', async () => {
    const tenant = await t.newTenant('No Domain Co');
    const none = await tenant.api('POST', '/organization/white-label-domain/verify', undefined, { env: 'live' });
    expect(none.statusCode).toBe(409);
    expect(fields(none)).toEqual(['whiteLabelDomain']);
    await tenant.api('PATCH', '/organization', { whiteLabelDomain: 'portal.flaky-dns.test' }, { env: 'live' });
    t.ctx.resolveTxt = async () => {
      throw Object.assign(new Error('queryTxt ETIMEOUT'), { code: 'ETIMEOUT' });
    };
    const failed = await tenant.api('POST', '/organization/white-label-domain/verify', undefined, { env: 'live' });
    expect(failed.statusCode).toBe(503);
    expect(failed.json().message).toContain('_fcs-domain-verification.portal.flaky-dns.test');
  });

  it('answers 503 within TXT_LOOKUP_TIMEOUT_MS when the DNS server never answers, and verifies once it does (OPS-7)', async () => {
    const tenant = await t.newTenant('Silent DNS Co');
    await tenant.api('PATCH', '/organization', { whiteLabelDomain: 'portal.silent-dns.test' }, { env: 'live' });
    t.ctx.resolveTxt = () => new Promise(() => undefined);
    const started = Date.now();
    const silent = await tenant.api('POST', '/organization/white-label-domain/verify', undefined, { env: 'live' });
    const waitedMs = Date.now() - started;
    expect(silent.statusCode).toBe(503);
    expect(silent.json()).toMatchObject({ code: 'service_unavailable', message: expect.stringContaining('ETIMEOUT') });
    expect(waitedMs).toBeGreaterThanOrEqual(TXT_LOOKUP_TIMEOUT_MS - 100);
    // OPS-7's bound, with room for a loaded machine.
    expect(waitedMs).toBeLessThan(15_000);
    const dns = fakeDns(t);
    const { recordName, recordValue } = (await tenant.api('GET', '/organization', undefined, { env: 'live' })).json()
      .whiteLabelDomainVerification;
    dns.publish(recordName, recordValue);
    const verified = await tenant.api('POST', '/organization/white-label-domain/verify', undefined, { env: 'live' });
    expect(verified.statusCode, verified.body).toBe(200);
  });
});
