import { one, type Db } from '../../lib/db.js';

/** Rows removed by one purge, by kind. */
export interface PurgeCounts {
  idempotencyKeys: number;
  checkoutForms: number;
  dashboardSessions: number;
  operatorSessions: number;
  magicLinks: number;
  loginAttempts: number;
  rateLimitCounters: number;
  streamedTenants: number;
  failedApiRequests: number;
  portalSecretViews: number;
}

/** What the purge keeps: the rules each kind of row lives by, in seconds. */
export interface PurgeRules {
  /** Idempotency keys are remembered this long (replays within it answer the first response). */
  idempotencyKeySeconds: number;
  /** A dashboard session ends after this long without a request, even before its absolute expiry. */
  dashboardIdleSeconds: number;
  /** Checkout form tokens older than this are useless (longer than any session). */
  checkoutFormSeconds: number;
  /** Login attempts older than this no longer count toward any throttle window. */
  loginAttemptSeconds: number;
  /** The integrator API's failed requests are shown this long in the partner portal's request log (PORTAL-24). */
  failedApiRequestSeconds: number;
}

/**
 * Deletes, in ONE statement (so the order the foreign keys need holds): expired idempotency keys; ended dashboard
 * sessions (signed out, expired, or idle too long) with their checkout forms (cascade); checkout forms too old to
 * be submitted; ended console sessions (signed out or expired); magic links spent or expired that no remaining
 * session still points at; login attempts past every throttle window; rate-limit counters of ended windows; streamed
 * tenants whose process stopped refreshing them (OPS-6); failed API requests older than the request log shows
 * (PORTAL-24); one-time secret views of the portal never opened and expired (PORTAL-46).
 * @returns how many rows of each kind went.
 */
export async function purgeExpired(db: Db, rules: PurgeRules): Promise<PurgeCounts> {
  const row = await one<PurgeCounts>(
    db,
    `WITH idem AS (
       DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(secs => $1) RETURNING 1),
     sessions AS (
       DELETE FROM dashboard_sessions
        WHERE revoked_at IS NOT NULL OR expires_at < now() OR last_seen_at < now() - make_interval(secs => $2)
        RETURNING magic_link_id),
     forms AS (
       DELETE FROM checkout_forms f WHERE f.created_at < now() - make_interval(secs => $3)
          OR f.session_id_hash IN (SELECT id_hash FROM dashboard_sessions WHERE revoked_at IS NOT NULL OR expires_at < now() OR last_seen_at < now() - make_interval(secs => $2))
        RETURNING 1),
     operators AS (
       DELETE FROM operator_sessions WHERE revoked_at IS NOT NULL OR expires_at < now() RETURNING 1),
     links AS (
       DELETE FROM magic_links l
        WHERE (l.used_at IS NOT NULL OR l.expires_at < now())
          AND NOT EXISTS (SELECT 1 FROM dashboard_sessions s WHERE s.magic_link_id = l.id
                            AND NOT (s.revoked_at IS NOT NULL OR s.expires_at < now() OR s.last_seen_at < now() - make_interval(secs => $2)))
        RETURNING 1),
     attempts AS (
       DELETE FROM login_attempts WHERE attempted_at < now() - make_interval(secs => $4) RETURNING 1),
     counters AS (
       DELETE FROM rate_limit_counters WHERE expires_at < now() RETURNING 1),
     streamed AS (
       DELETE FROM event_stream_tenants WHERE expires_at < now() RETURNING 1),
     failed AS (
       DELETE FROM failed_api_requests WHERE created_at < now() - make_interval(secs => $5) RETURNING 1),
     secret_views AS (
       DELETE FROM portal_secret_views WHERE expires_at < now() RETURNING 1)
     SELECT (SELECT count(*) FROM idem)::int AS "idempotencyKeys",
            (SELECT count(*) FROM forms)::int AS "checkoutForms",
            (SELECT count(*) FROM sessions)::int AS "dashboardSessions",
            (SELECT count(*) FROM operators)::int AS "operatorSessions",
            (SELECT count(*) FROM links)::int AS "magicLinks",
            (SELECT count(*) FROM attempts)::int AS "loginAttempts",
            (SELECT count(*) FROM counters)::int AS "rateLimitCounters",
            (SELECT count(*) FROM streamed)::int AS "streamedTenants",
            (SELECT count(*) FROM failed)::int AS "failedApiRequests",
            (SELECT count(*) FROM secret_views)::int AS "portalSecretViews"`,
    [
      rules.idempotencyKeySeconds,
      rules.dashboardIdleSeconds,
      rules.checkoutFormSeconds,
      rules.loginAttemptSeconds,
      rules.failedApiRequestSeconds,
    ],
  );
  return row!;
}
