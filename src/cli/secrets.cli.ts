import type { Command } from 'commander';
import { resealTaxIds, taxIdKeyUsage } from '../modules/orders/ein-tax-ids.js';
import { resealEndpointSecrets, secretKeyUsage } from '../modules/webhooks/endpoint-secrets.js';
import { io, withContext } from './cli-context.js';

/**
 * `secrets status` and `secrets rotate-key` (SEC-2, ORD-EIN-6): which data encryption keys seal the stored webhook
 * secrets and EIN tax ids, and re-sealing every one of them under DATA_ENCRYPTION_KEY (the old keys given in
 * DATA_ENCRYPTION_KEY_PREVIOUS).
 */
export function registerSecretsCommands(program: Command): void {
  const secrets = program
    .command('secrets')
    .description('Webhook signing secrets and EIN tax ids at rest, and the data encryption key');
  secrets
    .command('status')
    .option('--json', 'print JSON')
    .description('How many stored secrets and tax ids each data encryption key seals (by key id), and the current key')
    .action((opts) =>
      withContext(async ({ ctx }) => {
        const [usage, taxIds] = await Promise.all([secretKeyUsage(ctx.pool), taxIdKeyUsage(ctx.pool)]);
        const current = ctx.secrets.dataKeys.current.id;
        io(opts).print({ currentKeyId: current, secretsByKeyId: usage, taxIdsByKeyId: taxIds }, () =>
          [
            `Current key: ${current}`,
            ...Object.entries(usage).map(([id, n]) => `  ${id}: ${n} secret(s)${id === current ? ' (current)' : ''}`),
            ...Object.entries(taxIds).map(([id, n]) => `  ${id}: ${n} tax id(s)${id === current ? ' (current)' : ''}`),
          ].join('\n'),
        );
      }),
    );
  secrets
    .command('rotate-key')
    .option('--json', 'print JSON')
    .description(
      'Re-seal every stored secret and tax id under DATA_ENCRYPTION_KEY; the keys they are sealed under now go in DATA_ENCRYPTION_KEY_PREVIOUS',
    )
    .action((opts) =>
      withContext(async ({ ctx }) => {
        const result = await resealEndpointSecrets(ctx.pool, ctx.secrets.dataKeys);
        const resealedTaxIds = await resealTaxIds(ctx.pool, ctx.secrets.dataKeys);
        const [usage, taxIds] = await Promise.all([secretKeyUsage(ctx.pool), taxIdKeyUsage(ctx.pool)]);
        const current = ctx.secrets.dataKeys.current.id;
        const left = [...Object.entries(usage), ...Object.entries(taxIds)]
          .filter(([id]) => id !== current)
          .reduce((n, [, c]) => n + c, 0);
        io(opts).print(
          {
            currentKeyId: current,
            resealedEndpoints: result.resealed,
            resealedTaxIds,
            secretsByKeyId: usage,
            taxIdsByKeyId: taxIds,
          },
          () =>
            `Re-sealed the secrets of ${result.resealed} endpoint(s) and ${resealedTaxIds} tax id(s) under key ${current}.${left ? '' : ' Nothing needs an older key any more: DATA_ENCRYPTION_KEY_PREVIOUS can be removed.'}`,
        );
      }),
    );
}
