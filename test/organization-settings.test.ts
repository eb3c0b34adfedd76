import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './harness.js';
import { runSecuritySuite } from './security-suite.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const fields = (res: { json: () => any }) => (res.json().errors ?? []).map((e: { field: string }) => e.field);

describe('PATCH /organization', () => {
  it('changes only the fields sent, merges branding, and shows the change in both environments', async () => {
    const tenant = await t.newTenant('Settings Co');
    const res = await tenant.api('PATCH', '/organization', {
      name: 'Settings Company', whiteLabelDomain: 'Portal.Settings-Co.test', emailNotifications: false, dashboardBilling: 'customer',
      branding: { logoUrl: 'https://cdn.settings.test/logo.png', primaryColor: '#1A2B3C' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      id: tenant.organizationId, name: 'Settings Company', whiteLabelDomain: 'portal.settings-co.test', emailNotifications: false, dashboardBilling: 'customer',
      branding: { logoUrl: 'https://cdn.settings.test/logo.png', primaryColor: '#1a2b3c', accentColor: null },
    });

    const second = await tenant.api('PATCH', '/organization', { branding: { accentColor: '#00aa55', logoUrl: null } });
    expect(second.json().branding).toEqual({ logoUrl: null, primaryColor: '#1a2b3c', accentColor: '#00aa55' });
    expect(second.json()).toMatchObject({ name: 'Settings Company', dashboardBilling: 'customer', whiteLabelDomain: 'portal.settings-co.test' });

    const live = await tenant.api('GET', '/organization', undefined, { env: 'live' });
    expect(live.json()).toMatchObject({ environment: 'live', name: 'Settings Company', dashboardBilling: 'customer' });

    const cleared = await tenant.api('PATCH', '/organization', { whiteLabelDomain: null });
    expect(cleared.json().whiteLabelDomain).toBeNull();
  });

  it('refuses a white-label domain that is not a bare host name, naming the field', async () => {
    const tenant = await t.newTenant();
    for (const whiteLabelDomain of ['https://portal.example.com', 'portal.example.com:8443', 'portal.example.com/x', 'no spaces.example.com', '10.0.0.1', 'localhost', 'example']) {
      const res = await tenant.api('PATCH', '/organization', { whiteLabelDomain });
      expect(res.statusCode, whiteLabelDomain).toBe(400);
      expect(fields(res), whiteLabelDomain).toContain('whiteLabelDomain');
    }
  });

  it('answers 409 when another organization uses the domain', async () => {
    const a = await t.newTenant();
    const b = await t.newTenant();
    expect((await a.api('PATCH', '/organization', { whiteLabelDomain: 'taken.example.test' })).statusCode).toBe(200);
    const res = await b.api('PATCH', '/organization', { whiteLabelDomain: 'TAKEN.example.test' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'conflict', errors: [{ field: 'whiteLabelDomain' }] });
    expect((await a.api('PATCH', '/organization', { whiteLabelDomain: 'taken.example.test' })).statusCode).toBe(200);
  });

  it('validates branding, billing mode, name and unknown fields', async () => {
    const tenant = await t.newTenant();
    const res = await tenant.api('PATCH', '/organization', { branding: { logoUrl: 'http://insecure.test/logo.png', primaryColor: 'blue', accentColor: '#12345' } });
    expect(res.statusCode).toBe(400);
    expect(fields(res)).toEqual(expect.arrayContaining(['branding.primaryColor', 'branding.accentColor']));
    const logo = await tenant.api('PATCH', '/organization', { branding: { logoUrl: 'http://insecure.test/logo.png' } });
    expect(fields(logo)).toEqual(['branding.logoUrl']);
    expect(fields(await tenant.api('PATCH', '/organization', { dashboardBilling: 'customers' }))).toContain('dashboardBilling');
    expect(fields(await tenant.api('PATCH', '/organization', { name: '' }))).toContain('name');
    expect(fields(await tenant.api('PATCH', '/organization', { balance: 100 }))).toContain('balance');
    expect((await tenant.api('GET', '/organization')).json().dashboardBilling).toBe('organization');
  });

  it('sets, shows and removes the technical contact email, and refuses one that is not an email address', async () => {
    const tenant = await t.newTenant();
    expect((await tenant.api('GET', '/organization')).json().contactEmail).toBeNull();
    const set = await tenant.api('PATCH', '/organization', { contactEmail: 'dev-alerts@platform.example' });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().contactEmail).toBe('dev-alerts@platform.example');
    expect((await tenant.api('GET', '/organization', undefined, { env: 'live' })).json().contactEmail).toBe('dev-alerts@platform.example');

    for (const contactEmail of ['not-an-email', 'dev@', '@platform.example', 'two@at@platform.example', 'dev alerts@platform.example', '', 42]) {
      const bad = await tenant.api('PATCH', '/organization', { contactEmail });
      expect(bad.statusCode, String(contactEmail)).toBe(400);
      expect(bad.json().code).toBe('validation_error');
      expect(fields(bad), String(contactEmail)).toContain('contactEmail');
      expect(bad.json().message).toContain('contactEmail');
    }
    // A refused request changes nothing, not even the other fields sent with it.
    expect((await tenant.api('PATCH', '/organization', { name: 'Renamed', contactEmail: 'nope' })).statusCode).toBe(400);
    // One specific error for the nullable field, not the union's "must be null" / "anyOf" noise.
    expect((await tenant.api('PATCH', '/organization', { contactEmail: 'nope' })).json().errors).toEqual([{ field: 'contactEmail', message: 'must match format "email"' }]);
    expect((await tenant.api('GET', '/organization')).json()).toMatchObject({ name: 'Test Org', contactEmail: 'dev-alerts@platform.example' });

    const cleared = await tenant.api('PATCH', '/organization', { contactEmail: null });
    expect(cleared.json().contactEmail).toBeNull();
  });
});

runSecuritySuite({
  name: 'organization settings',
  app: () => t,
  routes: [{ method: 'PATCH', path: '/organization', body: { name: 'X' } }],
});
