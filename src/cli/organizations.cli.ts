import type { Command } from 'commander';
import type { Environment } from '../context.js';
import { addApiKey, createOrganization, revokeKey, serializeApiKey } from '../modules/organizations/organizations.service.js';
import { io, withContext } from './cli-context.js';

const envOption = (value: string): Environment => {
  if (value !== 'live' && value !== 'test') throw new Error(`--environment must be live or test (got '${value}')`);
  return value;
};

/** `org create`, `keys create`, `keys revoke` (issue 2 item 4). */
export function registerOrganizationCommands(program: Command): void {
  const org = program.command('org').description('Organizations (tenants)');
  org.command('create')
    .requiredOption('--name <name>', 'organization name')
    .option('--json', 'print JSON')
    .description('Create an organization with one live and one test API key (shown once)')
    .action((opts) => withContext(async ({ ctx }) => {
      const { organization, apiKeys } = await createOrganization(ctx.pool, opts.name);
      const out = { id: organization.id, name: organization.name, apiKeys };
      io(opts).print(out, () => [`Created ${out.id} (${out.name})`, `  live key: ${apiKeys.live.key}`, `  test key: ${apiKeys.test.key}`, 'Keys are shown only once.'].join('\n'));
    }));

  const keys = program.command('keys').description('API keys');
  keys.command('create')
    .requiredOption('--org <organizationId>', 'organization id (org_…)')
    .requiredOption('--environment <env>', 'live or test', envOption)
    .option('--json', 'print JSON')
    .description('Create an API key (shown once)')
    .action((opts) => withContext(async ({ ctx }) => {
      const key = await addApiKey(ctx.pool, opts.org, opts.environment);
      io(opts).print(key, () => `Created ${key.id} (${key.environment}): ${key.key}\nThe key is shown only once.`);
    }));
  keys.command('revoke')
    .requiredOption('--org <organizationId>', 'organization id (org_…)')
    .requiredOption('--key <keyId>', 'key id (key_…)')
    .option('--json', 'print JSON')
    .description('Revoke an API key at once')
    .action((opts) => withContext(async ({ ctx }) => {
      const key = serializeApiKey(await revokeKey(ctx.pool, opts.org, opts.key));
      io(opts).print(key, () => `Revoked ${key.id} (${key.redactedKey})`);
    }));
}
