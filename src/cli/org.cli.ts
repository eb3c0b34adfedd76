import type { Command } from 'commander';
import { centsToDollars, formatCents } from '../lib/money.js';
import {
  listOrganizationSummaries,
  organizationDetail,
  setWhiteLabelDomain,
  verifyDomainForOperator,
  type OrganizationDetail,
} from '../modules/console/organizations.console.js';
import { createdOrganizationView, createOrganization } from '../modules/organizations/organizations.service.js';
import { createInvitation } from '../modules/portal/invitations.service.js';
import { ROLES } from '../modules/portal/roles.js';
import { cliActor } from '../modules/audit/audit.service.js';
import { io, requiredValue, withContext } from './cli-context.js';

/** The `org` group: `org create|list|show|set-domain|verify-domain|invite` (ORG-1, ORG-4, PORTAL-3). */
export function registerOrgCommands(program: Command): void {
  const org = program.command('org').alias('orgs').description('Organizations (tenants)');
  org
    .command('create')
    .argument('[name]', 'organization name (or --name)')
    .option('--name <name>', 'organization name')
    .option('--contact-email <email>', 'technical contact, emailed when a webhook endpoint gets disabled')
    .option('--json', 'print JSON')
    .description('Create an organization with one live and one test API key (shown once)')
    .action((name: string | undefined, opts) =>
      withContext(async ({ ctx }) => {
        // The same JSON as POST /admin/v1/organizations.
        const out = createdOrganizationView(
          await createOrganization(ctx.pool, requiredValue(opts.name ?? name, '--name'), {
            contactEmail: opts.contactEmail,
          }),
        );
        io(opts).print(out, () =>
          [
            `Created ${out.id} (${out.name})`,
            `  contact email: ${out.contactEmail ?? '(none)'}`,
            `  live key: ${out.apiKeys.live}  (${out.apiKeyIds.live})`,
            `  test key: ${out.apiKeys.test}  (${out.apiKeyIds.test})`,
            'Keys are shown only once.',
          ].join('\n'),
        );
      }),
    );

  org
    .command('list')
    .option('--json', 'print JSON')
    .description('List organizations with balances (dollars), active keys and open live orders')
    .action((opts) =>
      withContext(async ({ ctx }) => {
        const rows = await listOrganizationSummaries(ctx.pool);
        const out = rows.map((r) => ({
          id: r.id,
          name: r.name,
          whiteLabelDomain: r.whiteLabelDomain,
          balances: { live: centsToDollars(r.liveBalanceCents), test: centsToDollars(r.testBalanceCents) },
          activeKeys: r.activeKeys,
          openLiveOrders: r.openLiveOrders,
          createdAt: r.createdAt.toISOString(),
        }));
        io(opts).print(
          out,
          () =>
            rows
              .map(
                (r) =>
                  `${r.id}  ${r.name.padEnd(28)} live ${formatCents(r.liveBalanceCents).padStart(12)}  test ${formatCents(r.testBalanceCents).padStart(12)}  keys ${r.activeKeys}  open ${r.openLiveOrders}${r.whiteLabelDomain ? `  ${r.whiteLabelDomain}` : ''}`,
              )
              .join('\n') || 'No organizations.',
        );
      }),
    );

  org
    .command('show')
    .argument('<organizationId>', 'organization id (org_…)')
    .option('--json', 'print JSON')
    .description('Show an organization: balances, keys (redacted), domain')
    .action((id: string, opts) =>
      withContext(async ({ ctx }) => {
        const { balanceCents, ...o } = await organizationDetail(ctx, id);
        io(opts).print(o, () =>
          [
            `${o.id}  ${o.name}`,
            `  white-label domain: ${o.whiteLabelDomain ? `${o.whiteLabelDomain} (${o.whiteLabelDomainVerification?.status})` : '—'}`,
            `  contact email: ${o.contactEmail ?? '—'}`,
            `  balances: live ${formatCents(balanceCents.live)}, test ${formatCents(balanceCents.test)}`,
            '  keys:',
            ...o.apiKeys.map(
              (k) =>
                `    ${k.id}  ${k.environment}  ${k.redactedKey}  ${k.revokedAt ? `revoked ${k.revokedAt}` : 'active'}`,
            ),
          ].join('\n'),
        );
      }),
    );

  org
    .command('set-domain')
    .argument('<organizationId>', 'organization id (org_…)')
    .argument('[domain]', 'host name such as portal.example.com; omit (or use --clear) to remove')
    .option('--clear', 'remove the white-label domain')
    .option(
      '--verified',
      'you confirmed the organization controls the domain: put it in effect now, without the DNS TXT check',
    )
    .option('--json', 'print JSON')
    .description(
      "Set or remove an organization's white-label domain (pending until its DNS TXT record is verified, unless --verified)",
    )
    .action((id: string, domain: string | undefined, opts) =>
      withContext(async ({ ctx }) => {
        if (!domain && !opts.clear) throw new Error('Give a domain, or --clear to remove it');
        const { balanceCents: _omit, ...o } = await setWhiteLabelDomain(ctx, id, opts.clear ? null : (domain ?? null), {
          verified: opts.verified === true,
          audit: cliActor(),
        });
        io(opts).print(o, () => describeDomain(o));
      }),
    );

  org
    .command('verify-domain')
    .argument('<organizationId>', 'organization id (org_…)')
    .option('--json', 'print JSON')
    .description(
      "Check the DNS TXT record of an organization's requested white-label domain; when found the domain takes effect",
    )
    .action((id: string, opts) =>
      withContext(async ({ ctx }) => {
        const { balanceCents: _omit, ...o } = await verifyDomainForOperator(ctx, id, cliActor());
        io(opts).print(o, () => describeDomain(o));
      }),
    );
  org
    .command('invite')
    .argument('<organizationId>', 'organization id (org_…)')
    .argument('<email>', "the invitee's e-mail address")
    .argument('<role>', ROLES.join(', '))
    .option('--json', 'print JSON')
    .description('Invite someone into the partner portal of an organization: a single-use link valid for 72 hours')
    .action((id: string, email: string, role: string, opts) =>
      withContext(async ({ ctx }) => {
        // The same JSON as POST /admin/v1/organizations/{id}/invitations.
        const created = await createInvitation(ctx, {
          organizationId: id,
          email,
          role,
          invitedBy: 'cli',
          audit: cliActor(),
        });
        const out = { invitationUrl: created.invitationUrl, expiresAt: created.expiresAt.toISOString() };
        io(opts).print(out, () =>
          [
            `Invited ${email} as ${role} into ${id}.`,
            `  link: ${out.invitationUrl}`,
            `  works once, until ${out.expiresAt}; it is shown only now.`,
          ].join('\n'),
        );
      }),
    );
}

// One line on the domain's state; a pending domain also says which record the organization must publish.
function describeDomain(o: Omit<OrganizationDetail, 'balanceCents'>): string {
  const v = o.whiteLabelDomainVerification;
  if (!o.whiteLabelDomain || !v) return `${o.id}: white-label domain removed`;
  if (v.status === 'verified') return `${o.id}: white-label domain ${o.whiteLabelDomain} is verified and in effect`;
  return (
    `${o.id}: white-label domain ${o.whiteLabelDomain} is pending; it takes effect once the TXT record ${v.recordName} holds "${v.recordValue}" and ` +
    `\`org verify-domain ${o.id}\` finds it (or set it again with --verified)`
  );
}
