import { it } from 'vitest';
import { createCompany } from './factories.js';
import { createTestApp } from './harness.js';
import { signIn } from './dashboard-helpers.js';
it('debug', async () => {
  const t = await createTestApp({ DASHBOARD_BASE_URL: 'http://localhost:3000/dashboard' });
  const tenant = await t.newTenant('x');
  await tenant.api('PATCH', '/organization', { dashboardBilling: 'customer' });
  const { user, company } = await createCompany(tenant);
  const s = await signIn(t, tenant, { userId: user.id });
  const r = await s.get(`/companies/${company.id}/checkout/ein`);
  console.log(r.statusCode, t.logs.filter((l) => l.includes('"level":50')).join('\n').slice(0, 3000));
  await t.close();
});
