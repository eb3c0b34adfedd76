import type pg from 'pg';
import { withTransaction } from '../../lib/db.js';
import type { SignInLimits, SignInParty } from '../rate-limits/sign-in-limits.js';
import { DUMMY_HASH, hashPassword, passwordNeedsRehash, verifyPassword } from './password.js';
import type { PasswordCheckQueue } from './password-queue.js';
import * as repo from './operators.repo.js';
import { createSession } from './sessions.js';

/** Seconds a sign-in refused because the password checks are saturated is told to wait (Retry-After). */
const BUSY_RETRY_SECONDS = 5;

/**
 * Outcome of a sign-in: a new session (expiresAt is a Date), wrong credentials, delayed by failures (`of`: the account
 * at this address, or the account), or refused while busy.
 */
export type LoginResult =
  | { ok: true; sessionId: string; expiresAt: Date; operatorId: string }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'throttled'; retryAfterSeconds: number; of: 'pair' | 'account' }
  | { ok: false; reason: 'busy'; retryAfterSeconds: number };

const BUSY: LoginResult = { ok: false, reason: 'busy', retryAfterSeconds: BUSY_RETRY_SECONDS };

/**
 * A console sign-in (AUTH-8), answered by `input.deadline` (performance.now() time) whatever the load:
 * 1. the failure delays are checked (one read, nothing queued or hashed yet): a delayed attempt is answered at once;
 * 2. the attempt waits for its password check in `checks` (clean addresses first), or is refused as busy;
 * 3. in its place, one short transaction re-checks the delays under the account's lock, records the attempt as FAILED
 *    and reads the operator; the password is then hashed with no database connection held;
 * 4. on success, a second short transaction marks the attempt succeeded, replaces an older kind of hash (hashed
 *    before it) and starts a session; on failure, the failure is timed from now, so that its delay runs from the
 *    answer.
 * A sign-in not done by the deadline (a slow database, a check that outlives it) is answered busy; its work, left to
 * finish, queues nothing more, starts no session, and removes its recorded failure (nobody was told the outcome).
 * `verify` checks the password against the stored hash (verifyPassword).
 */
export async function attemptLogin(
  pool: pg.Pool,
  checks: PasswordCheckQueue,
  limits: SignInLimits,
  input: { email: string; password: string; ip: string; deadline: number },
  verify: typeof verifyPassword = verifyPassword,
): Promise<LoginResult> {
  const party: SignInParty = { account: input.email.trim().toLowerCase(), address: input.ip };
  let late = false;
  const work = (async (): Promise<LoginResult> => {
    const verdict = await limits.check(pool, party);
    if (!verdict.allowed)
      return { ok: false, reason: 'throttled', retryAfterSeconds: verdict.retryAfterSeconds, of: verdict.of };
    if (late) {
      verdict.claim.release();
      return BUSY;
    }
    const checked = checks.run(
      () => checkPassword(pool, limits, party, input.password, verify, () => late, verdict.claim),
      { clean: verdict.clean, deadline: input.deadline },
    );
    // Whatever happens to the check, the attempt is no longer under way once it ended or was refused.
    void checked.then(verdict.claim.release, verdict.claim.release);
    const outcome = await checked;
    return outcome.ran ? outcome.value : BUSY;
  })();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), Math.max(0, input.deadline - performance.now()));
  });
  // Once answered busy, what the work still finds is told to nobody (its failure, if any, too).
  work.catch(() => undefined);
  try {
    const outcome = await Promise.race([work, deadline]);
    return outcome === 'late' ? BUSY : outcome;
  } finally {
    late = true;
    clearTimeout(timer);
  }
}

// Steps 3 and 4, in the place the queue gave. `late()` turns true once the sign-in has been answered.
async function checkPassword(
  pool: pg.Pool,
  limits: SignInLimits,
  party: SignInParty,
  password: string,
  verify: typeof verifyPassword,
  late: () => boolean,
  claim: { release(): void },
): Promise<LoginResult> {
  if (late()) return BUSY;
  const attempt = await withTransaction(pool, async (tx) => {
    const recorded = await limits.record(tx, party);
    return recorded.allowed ? { ...recorded, operator: await repo.findOperatorByEmail(tx, party.account) } : recorded;
  });
  claim.release();
  if (!attempt.allowed)
    return { ok: false, reason: 'throttled', retryAfterSeconds: attempt.retryAfterSeconds, of: attempt.of };
  const { operator, attemptedAt } = attempt;
  const unanswered = async () => {
    await limits.forget(pool, party, attemptedAt);
    return BUSY;
  };
  if (late()) return unanswered();
  const valid = await verify(password, operator?.password_hash ?? DUMMY_HASH);
  if (late()) return unanswered();
  if (!operator || !valid || operator.disabled_at) {
    await limits.failed(pool, party, attemptedAt);
    return { ok: false, reason: 'invalid' };
  }
  // An older hash (scrypt) is replaced now that the password is known, hashed with no connection held (AUTH-9).
  const upgraded = passwordNeedsRehash(operator.password_hash) ? await hashPassword(password) : null;
  if (late()) return unanswered();
  return withTransaction(pool, async (tx) => {
    await limits.succeeded(tx, party, attemptedAt);
    if (upgraded) await repo.upgradePasswordHash(tx, operator.id, operator.password_hash, upgraded);
    const session = await createSession(tx, operator.id);
    return { ok: true as const, ...session, operatorId: operator.id };
  });
}
