import type { Command } from 'commander';
import { addApiKey, createdOrganizationView, createOrganization, revokeKey, serializeApiKey } from '../modules/organizations/organizations.service.js';
import { envOption, io, withContext } from './cli-context.js';

/** `org create`, `keys create`, `keys revoke` (issue 2 item 4). */
export function registerOrganizationCommands(program: Command): void {
  const org = program.command('org').description('Organizations (tenants)');
  org.command('create')
    .argument('[name]', 'organization name (or --name)')
    .option('--name <name>', 'organization name')
    .option('--contact-email <email>', 'technical contact, emailed when a webhook endpoint gets disabled')
    .option('--json', 'print JSON')
    .description('Create an organization with one live and one test API key (shown once)')
    .action((name: string | undefined, opts) => withContext(async ({ ctx }) => {
      // The same JSON as POST /admin/v1/organizations.
      const out = createdOrganizationView(await createOrganization(ctx.pool, required(opts.name ?? name, '--name'), { contactEmail: opts.contactEmail }));
      io(opts).print(out, () => [`Created ${out.id} (${out.name})`, `  contact email: ${out.contactEmail ?? '(none)'}`, `  live key: ${out.apiKeys.live}  (${out.apiKeyIds.live})`, `  test key: ${out.apiKeys.test}  (${out.apiKeyIds.test})`, 'Keys are shown only once.'].join('\n'));
    }));

  const keys = program.command('keys').description('API keys');
  keys.command('create')
    .argument('[organizationId]', 'organization id (or --org)')
    .option('--org <organizationId>', 'organization id (org_…)')
    .requiredOption('--environment <env>', 'live or test', envOption)
    .option('--json', 'print JSON')
    .description('Create an API key (shown once)')
    .action((orgId: string | undefined, opts) => withContext(async ({ ctx }) => {
      const key = await addApiKey(ctx.pool, required(opts.org ?? orgId, '--org'), opts.environment);
      io(opts).print(key, () => `Created ${key.id} (${key.environment}): ${key.key}\nThe key is shown only once.`);
    }));
  keys.command('revoke')
    .argument('[keyId]', 'key id (or --key)')
    .option('--key <keyId>', 'key id (key_…)')
    .option('--org <organizationId>', 'organization id (org_…); default: the key\'s organization')
    .option('--json', 'print JSON')
    .description('Revoke an API key at once')
    .action((keyId: string | undefined, opts) => withContext(async ({ ctx }) => {
      const key = serializeApiKey(await revokeKey(ctx.pool, opts.org ?? null, required(opts.key ?? keyId, '--key')));
      io(opts).print(key, () => `Revoked ${key.id} (${key.redactedKey})`);
    }));
}

function required(value: string | undefined, option: string): string {
  if (!value) throw new Error(`${option} is required (or give it as the argument)`);
  return value;
}
