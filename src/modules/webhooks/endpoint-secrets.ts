import type pg from 'pg';
import type { AppContext } from '../../context.js';
import { withTransaction } from '../../lib/db.js';
import { isSealed, open, seal, type Keyring } from '../../lib/secret-box.js';
import * as repo from './webhooks.repo.js';

/**
 * Webhook signing secrets at rest (SEC-2): `webhook_endpoints.secret` and `previous_secret` hold sealed text
 * (src/lib/secret-box.ts, the endpoint id as associated data). Everything that signs reads them through
 * `signingSecrets`; nothing else opens them.
 */

/** Seals a new `whsec_` secret of endpoint `endpointId` for storage. */
export function sealEndpointSecret(ctx: Pick<AppContext, 'secrets'>, endpointId: string, secret: string): string {
  return seal(ctx.secrets.dataKeys, secret, endpointId);
}

/** What `signingSecrets` needs of an endpoint: its id and the two stored secret columns as read. */
export interface StoredEndpointSecrets {
  endpointId: string;
  /** webhook_endpoints.secret as stored. */
  secret: string;
  /** webhook_endpoints.previous_secret as stored (null when never rotated). */
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
}

/**
 * The secrets a delivery is signed with right now, opened: the current one first, then the replaced one while its
 * rotation grace lasts (`previousSecretExpiresAt` after `now`; pass the database clock). A value stored before
 * sealing existed is used as it is until the boot or `secrets rotate-key` seals it.
 * @throws SecretBoxError when a secret is sealed under a key this process does not have (its message says which
 *   variables to set), or does not belong to this endpoint.
 */
export function signingSecrets(ctx: Pick<AppContext, 'secrets'>, e: StoredEndpointSecrets, now: Date): string[] {
  const opened = (value: string) => (isSealed(value) ? open(ctx.secrets.dataKeys, value, e.endpointId) : value);
  const secrets = [opened(e.secret)];
  if (e.previousSecret && e.previousSecretExpiresAt && e.previousSecretExpiresAt > now)
    secrets.push(opened(e.previousSecret));
  return secrets;
}

/** What a re-sealing pass did. */
export interface ResealResult {
  /** Endpoints whose secrets were (re-)sealed under the current key. */
  resealed: number;
  /** Endpoints already sealed under the current key. */
  current: number;
}

const BATCH = 200;

/**
 * Seals every endpoint secret still in clear and, unless `onlyPlaintext`, re-seals every secret sealed under an
 * older key with the keyring's current key (the `secrets rotate-key` command; the boot runs it with
 * `onlyPlaintext`). Deleted endpoints included: their rows are kept. Batches of 200 rows, each one transaction
 * that locks its rows, so concurrent rotations of an endpoint's secret are never lost.
 * @throws SecretBoxError when a secret is sealed under a key the keyring lacks (nothing of that batch is written).
 */
export async function resealEndpointSecrets(
  pool: pg.Pool,
  keyring: Keyring,
  options: { onlyPlaintext?: boolean } = {},
): Promise<ResealResult> {
  const result: ResealResult = { resealed: 0, current: 0 };
  let after = '';
  for (;;) {
    const done = await withTransaction(pool, async (tx) => {
      const rows = await repo.lockStaleSecrets(
        tx,
        after,
        BATCH,
        options.onlyPlaintext ? null : `sealed:v1:${keyring.current.id}:%`,
      );
      for (const r of rows) {
        const again = (value: string) => seal(keyring, isSealed(value) ? open(keyring, value, r.id) : value, r.id);
        await repo.updateEndpointSecrets(
          tx,
          r.id,
          again(r.secret),
          r.previous_secret === null ? null : again(r.previous_secret),
        );
        result.resealed++;
      }
      if (rows.length) after = rows[rows.length - 1]!.id;
      return rows.length < BATCH;
    });
    if (done) break;
  }
  if (!options.onlyPlaintext) {
    result.current = (await repo.countSecretsLike(pool, `sealed:v1:${keyring.current.id}:%`)) - result.resealed;
  }
  return result;
}

/** Key ids found on stored secrets with how many secrets each seals (`plaintext` for values still in clear). */
export async function secretKeyUsage(pool: pg.Pool): Promise<Record<string, number>> {
  const rows = await repo.countSecretsByKey(pool);
  return Object.fromEntries(rows.map((r) => [r.key, r.n]));
}
