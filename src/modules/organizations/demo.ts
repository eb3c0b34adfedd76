import type { AppContext } from '../../context.js';
import { one } from '../../lib/db.js';
import { createOrganization } from './organizations.service.js';

/**
 * On first start with an empty database: creates a demo organization and returns the lines to print once
 * (its test key, the operator token, a copy-paste curl). Returns null on every later start.
 */
export async function ensureDemoOrganization(ctx: AppContext): Promise<string[] | null> {
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
    `  Operator token:  ${ctx.secrets.operatorToken}`,
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
