import type { AppContext } from '../../context.js';
import { one } from '../../lib/db.js';
import { createOrganization } from './organizations.service.js';

/**
 * On the first start of the embedded quick start (no DATABASE_URL) with an empty database: creates a demo
 * organization and returns the lines to print once (its test key, the operator token when this instance generated
 * it, a copy-paste curl). Returns null on every later start and whenever DATABASE_URL is set: a real deployment
 * gets no organization nobody asked for, and no key printed to its logs.
 */
export async function ensureDemoOrganization(ctx: AppContext): Promise<string[] | null> {
  if (ctx.config.databaseUrl) return null;
  const claimed = await one(ctx.pool, `INSERT INTO instance_settings (key, value) SELECT 'demo_organization', '{}'::jsonb
     WHERE NOT EXISTS (SELECT 1 FROM organizations) ON CONFLICT (key) DO NOTHING RETURNING key`);
  if (!claimed) return null;
  const { organization, apiKeys } = await createOrganization(ctx.pool, 'Demo Organization');
  await ctx.pool.query(`UPDATE instance_settings SET value = $1 WHERE key = 'demo_organization'`, [{ organizationId: organization.id }]);
  return [
    '',
    '  First start: created the demo organization ' + organization.id,
    '  These secrets are shown only now. Keep them.',
    '',
    `  Test API key:    ${apiKeys.test.key}`,
    // A token that came from the environment is the deployer's secret: never echoed to the console or logs.
    ctx.config.operatorToken ? '  Operator token:  the OPERATOR_TOKEN you set (not shown)' : `  Operator token:  ${ctx.secrets.operatorToken}  (kept in ${ctx.config.dataDir}/operator-token)`,
    '',
    '  Create a user:',
    `  curl -s -X POST ${ctx.config.testBaseUrl}/users \\`,
    `    -H 'x-api-key: ${apiKeys.test.key}' -H 'content-type: application/json' \\`,
    `    -d '{"fullName":"Ada Lovelace","email":"ada@example.com","phoneNumber":"+14155550123"}'`,
    '',
    `  API reference: ${new URL(ctx.config.liveBaseUrl).origin}/docs`,
    '',
  ];
}
