import type { AppContext } from './context.js';
import { createInvitation } from './modules/portal/invitations.service.js';
import { createOrganization } from './modules/organizations/organizations.service.js';
import * as repo from './modules/organizations/organizations.repo.js';

/** Whom the demo organization's portal invitation is for (any address works: no e-mail is sent). */
const DEMO_OWNER_EMAIL = 'owner@demo.example';

/**
 * On the first start of the embedded quick start (no DATABASE_URL) with an empty database: creates a demo
 * organization and returns the lines to print once (its test key, the operator token when this instance generated
 * it, an invitation link into the partner portal as its owner, a copy-paste curl). Returns null on every later start and whenever DATABASE_URL is set: a real deployment
 * gets no organization nobody asked for, and no key printed to its logs.
 */
export async function ensureDemoOrganization(ctx: AppContext): Promise<string[] | null> {
  if (ctx.config.databaseUrl) return null;
  if (!(await repo.claimDemoOrganization(ctx.pool))) return null;
  const { organization, apiKeys } = await createOrganization(ctx.pool, 'Demo Organization');
  await repo.recordDemoOrganization(ctx.pool, organization.id);
  // The portal's first member is invited like any other (PORTAL-3): one click from the terminal into the portal.
  const invitation = await createInvitation(ctx, {
    organizationId: organization.id,
    email: DEMO_OWNER_EMAIL,
    role: 'owner',
    invitedBy: 'operator',
    audit: null,
  });
  return [
    '',
    `  First start: created the demo organization ${organization.id}`,
    '  These secrets are shown only now. Keep them.',
    '',
    `  Test API key:    ${apiKeys.test.key}`,
    // A token that came from the environment is the deployer's secret: never echoed to the console or logs.
    ctx.config.operatorToken
      ? '  Operator token:  the OPERATOR_TOKEN you set (not shown)'
      : `  Operator token:  ${ctx.secrets.operatorToken}  (kept in ${ctx.config.dataDir}/operator-token)`,
    `  Partner portal:  ${invitation.invitationUrl}`,
    `                   (an invitation for ${DEMO_OWNER_EMAIL} as owner, valid until ${invitation.expiresAt.toISOString()})`,
    '',
    '  In a shell:',
    `  export KEY=${apiKeys.test.key} B=${ctx.config.testBaseUrl}`,
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
