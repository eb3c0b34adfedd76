import type { Command } from 'commander';
import { cliActor } from '../modules/audit/audit.service.js';
import { addApiKey, revokeKey, serializeApiKey } from '../modules/organizations/organizations.service.js';
import { envOption, io, requiredValue, withContext } from './cli-context.js';

/** The `keys` group: `keys create`, `keys revoke` (AUTH-3). */
export function registerKeysCommands(program: Command): void {
  const keys = program.command('keys').description('API keys');
  keys
    .command('create')
    .argument('[organizationId]', 'organization id (or --org)')
    .option('--org <organizationId>', 'organization id (org_…)')
    .requiredOption('--environment <env>', 'live or test', envOption)
    .option('--json', 'print JSON')
    .description('Create an API key (shown once)')
    .action((orgId: string | undefined, opts) =>
      withContext(async ({ ctx }) => {
        const key = await addApiKey(
          ctx.pool,
          requiredValue(opts.org ?? orgId, '--org'),
          opts.environment,
          undefined,
          cliActor(),
        );
        io(opts).print(key, () => `Created ${key.id} (${key.environment}): ${key.key}\nThe key is shown only once.`);
      }),
    );
  keys
    .command('revoke')
    .argument('[keyId]', 'key id (or --key)')
    .option('--key <keyId>', 'key id (key_…)')
    .option('--org <organizationId>', "organization id (org_…); default: the key's organization")
    .option('--json', 'print JSON')
    .description('Revoke an API key at once')
    .action((keyId: string | undefined, opts) =>
      withContext(async ({ ctx }) => {
        const key = serializeApiKey(
          await revokeKey(ctx.pool, opts.org ?? null, requiredValue(opts.key ?? keyId, '--key'), undefined, cliActor()),
        );
        io(opts).print(key, () => `Revoked ${key.id} (${key.redactedKey})`);
      }),
    );
}
