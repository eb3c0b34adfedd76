import type pg from 'pg';
import type { Tenant } from '../../src/context.js';
import { creditBalance } from '../../src/modules/billing/ledger.js';
import { createOrganization } from '../../src/modules/organizations/organizations.service.js';

/** A tenant a bench section places orders and reads as: its test environment, key headers and one user. */
export interface BenchTenant {
  tenant: Tenant;
  /** `content-type` JSON and the test API key. */
  headers: Record<string, string>;
  userId: string;
}

/**
 * Creates an organization named `name` on `pool`'s database, credits its test balance with `creditCents` cents,
 * and creates one user through the service at `serverUrl` (as an integrator would).
 * @throws when the service refuses the user.
 */
export async function createBenchTenant(
  pool: pg.Pool,
  serverUrl: string,
  name: string,
  creditCents: number,
): Promise<BenchTenant> {
  const { organization, apiKeys } = await createOrganization(pool, name);
  const tenant: Tenant = { organizationId: organization.id, environment: 'test' };
  await creditBalance(pool, tenant, creditCents, 'bench credit', 'bench');
  const headers = { 'content-type': 'application/json', 'x-api-key': apiKeys.test.key };
  const res = await fetch(`${serverUrl}/test/v1/users`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ fullName: `${name} User`, email: 'bench-user@example.com' }),
  });
  if (res.status !== 201) throw new Error(`POST /users: ${res.status} ${await res.text()}`);
  return { tenant, headers, userId: ((await res.json()) as { id: string }).id };
}
