import { one, type Db } from '../../lib/db.js';

/** What a one-time secret view holds (PORTAL-46). */
export type SecretViewKind = 'api_key' | 'webhook_secret' | 'recovery_codes';

/** Keeps a sealed secret for one view by the session `sessionHash`, until `seconds` from now. */
export async function insertSecretView(
  db: Db,
  view: { id: string; sessionHash: string; kind: SecretViewKind; sealed: string },
  seconds: number,
): Promise<void> {
  await db.query(
    `INSERT INTO portal_secret_views (id, session_hash, kind, sealed, expires_at)
     VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))`,
    [view.id, view.sessionHash, view.kind, view.sealed, seconds],
  );
}

/**
 * Deletes the view `id` of kind `kind` when it belongs to the session `sessionHash` and has not expired, and returns
 * its sealed secret: one statement, so two requests never both get it. Null when there is no such view (taken
 * already, another session's, expired or unknown).
 */
export async function takeSecretView(
  db: Db,
  id: string,
  sessionHash: string,
  kind: SecretViewKind,
): Promise<string | null> {
  const row = await one<{ sealed: string }>(
    db,
    `DELETE FROM portal_secret_views WHERE id = $1 AND session_hash = $2 AND kind = $3 AND expires_at > now()
     RETURNING sealed`,
    [id, sessionHash, kind],
  );
  return row?.sealed ?? null;
}
