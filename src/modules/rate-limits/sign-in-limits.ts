import type { FastifyReply, FastifyRequest } from 'fastify';
import type pg from 'pg';
import type { RateLimitConfig } from '../../config-types.js';
import type { Db } from '../../lib/db.js';
import { countAgainstLimit, type LimitName, rateLimitedRequests } from './rate-limits.js';
import * as repo from './sign-in-attempts.repo.js';

/**
 * How failed password sign-ins slow further attempts down (AUTH-8). Failures count for 15 minutes, and only those
 * after the key's latest success. Per account and client address (the pair): 3 free failures, then each next
 * attempt waits 2^(failures − 3) seconds after the pair's latest failure (1, 2, 4, … at most 300 s). Per account, from
 * every address together: 10 free failures, then 2^(failures − 10) seconds (at most 60 s), which binds only addresses
 * that are not clean (a clean address has no failed sign-in at all that still counts, and none under way): failures
 * alone therefore never keep an operator at a clean address out.
 */
export const FAILURE_DELAYS = {
  windowSeconds: 15 * 60,
  pair: { free: 3, capSeconds: 300 },
  account: { free: 10, capSeconds: 60 },
} as const;

/** Who signs in: the account as typed (compared in lower case) and the client address (request.ip, SEC-8). */
export interface SignInParty {
  account: string;
  address: string;
}

/** An attempt allowed so far, counted as under way until `release` (idempotent) or until it is recorded. */
interface SignInClaim {
  release(): void;
}

/**
 * The verdict on an attempt before any queueing or hashing: allowed (`clean`: from an address without failures, whose
 * password check goes first), or delayed by the failures of the account at this address (`pair`) or of the account
 * (`account`) for `retryAfterSeconds`.
 */
export type SignInVerdict =
  | { allowed: true; clean: boolean; claim: SignInClaim }
  | { allowed: false; retryAfterSeconds: number; of: 'pair' | 'account' };

/** A recorded attempt (its failure written before its password is checked), or one the failures delay after all. */
export type RecordedAttempt =
  | { allowed: true; attemptedAt: string }
  | { allowed: false; retryAfterSeconds: number; of: 'pair' | 'account' };

/** What one password sign-in form is limited by: its name among the limits, and its attempts per address. */
export interface SignInLimitPolicy {
  /** Prefix of its keys in `login_attempts` (e.g. `console`), so that two sign-in forms never share failures. */
  scope: string;
  /** Its per-address limit, in the shared counters and the metrics (bucket `<limit>:<address>`). */
  limit: LimitName;
  /** Attempts per client address per window of `rateLimits.windowSeconds` (e.g. RATE_LIMIT_SIGN_IN_ATTEMPTS). */
  perAddress: number;
}

// Beyond this many failures every delay is at its cap: no need to count further.
const COUNTED_FAILURES = Math.max(
  ...[FAILURE_DELAYS.pair, FAILURE_DELAYS.account].map((r) => r.free + 1 + Math.ceil(Math.log2(r.capSeconds))),
);

interface Tally {
  failures: number;
  sinceLastMs: number | null;
}

/**
 * The limits of a password sign-in form (AUTH-8, LIM-8), checked before anything costly: `limitAddress` first thing
 * on the request (attempts per client address, in the shared rate-limit counters), `check` before the attempt waits
 * for a password check (growing delays after failures, read from `login_attempts`), `record` with the check's place
 * (re-checked under the account's lock, the failure written before the hash), then `failed`, `succeeded` or
 * `forget` (answered busy).
 * Any password sign-in the service gains uses one of these with its own policy.
 */
export class SignInLimits {
  private readonly windowMs: number;
  /** Attempts allowed by `check` and not yet recorded, per key: they count as failures of right now. */
  private readonly underWay = new Map<string, number>();

  constructor(
    private readonly policy: SignInLimitPolicy,
    private readonly rateLimits: RateLimitConfig,
  ) {
    this.windowMs = rateLimits.windowSeconds * 1000;
  }

  /**
   * Counts one attempt of the request's client address (onRequest, before the body is read).
   * @throws AppError rate_limited (429, Retry-After and RateLimit-* set on `reply`) beyond `perAddress` in the window.
   */
  limitAddress(request: FastifyRequest, reply: FastifyReply): void {
    const { perAddress } = this.policy;
    const window = this.rateLimits.windowSeconds === 60 ? 'minute' : `${this.rateLimits.windowSeconds} seconds`;
    countAgainstLimit(request, reply, {
      name: this.policy.limit,
      bucket: request.ip,
      max: perAddress,
      windowMs: this.windowMs,
      refusal: (seconds) =>
        `Too many sign-in attempts from this client address: at most ${perAddress} per ${window}; retry in ${seconds} seconds (Retry-After)`,
    });
  }

  /**
   * The verdict on an attempt, before it waits for a password check: one read of `login_attempts` plus the attempts
   * of this process still under way. An allowed attempt holds a claim until `record` (or its release).
   */
  async check(db: Db, party: SignInParty): Promise<SignInVerdict> {
    const keys = this.keysOf(party);
    const tallies = await this.talliesOf(db, keys);
    const pending = keys.map((k) => this.underWay.get(k) ?? 0);
    // Attempts under way count as failures of right now: parallel guesses cannot overrun the free failures.
    const [pair, account, address] = tallies.map((t, i) =>
      pending[i]! > 0 ? { failures: t.failures + pending[i]!, sinceLastMs: 0 } : t,
    ) as [Tally, Tally, Tally];
    const verdict = decide(pair, account, address.failures === 0);
    if (!verdict.allowed) {
      rateLimitedRequests.inc({ limit: 'sign-in-failures' satisfies LimitName });
      return verdict;
    }
    for (const k of keys) this.underWay.set(k, (this.underWay.get(k) ?? 0) + 1);
    let released = false;
    const claim: SignInClaim = {
      release: () => {
        if (released) return;
        released = true;
        for (const k of keys) {
          const n = (this.underWay.get(k) ?? 1) - 1;
          if (n > 0) this.underWay.set(k, n);
          else this.underWay.delete(k);
        }
      },
    };
    return { allowed: true, clean: verdict.clean, claim };
  }

  /**
   * Records the attempt as failed before its password is checked, in the caller's transaction: takes the account's
   * lock and decides again on what every process has recorded, so that parallel attempts through several processes
   * cannot overrun the free failures either.
   */
  async record(tx: pg.PoolClient, party: SignInParty): Promise<RecordedAttempt> {
    const keys = this.keysOf(party);
    await repo.lockAttemptKey(tx, keys[1]!);
    const [pair, account, address] = (await this.talliesOf(tx, keys)) as [Tally, Tally, Tally];
    const verdict = decide(pair, account, address.failures === 0);
    if (!verdict.allowed) {
      rateLimitedRequests.inc({ limit: 'sign-in-failures' satisfies LimitName });
      return verdict;
    }
    return { allowed: true, attemptedAt: await repo.insertFailedAttempt(tx, keys) };
  }

  /**
   * Confirms a recorded attempt as failed (the password did not match), timed from now: the delays it adds run from
   * its answer, however long its check took.
   */
  async failed(db: Db, party: SignInParty, attemptedAt: string): Promise<void> {
    await repo.stampFailure(db, this.keysOf(party), attemptedAt);
  }

  /** Marks a recorded attempt as succeeded: the failures of its account and of its pair count again from zero. */
  async succeeded(tx: Db, party: SignInParty, attemptedAt: string): Promise<void> {
    await repo.markAttemptSucceeded(tx, this.keysOf(party), attemptedAt);
  }

  /** Removes a recorded attempt whose outcome nobody was told (answered busy): it neither counts nor resets. */
  async forget(db: Db, party: SignInParty, attemptedAt: string): Promise<void> {
    await repo.deleteAttempt(db, this.keysOf(party), attemptedAt);
  }

  /** The keys of a party in `login_attempts`: pair, account, address (in that order). */
  keysOf(party: SignInParty): [string, string, string] {
    const account = party.account.trim().toLowerCase();
    const { scope } = this.policy;
    // The address first: it has no spaces, so the pair's key is unambiguous whatever the account holds.
    return [
      `${scope}:pair:${party.address} ${account}`,
      `${scope}:account:${account}`,
      `${scope}:address:${party.address}`,
    ];
  }

  private talliesOf(db: Db, keys: string[]): Promise<Tally[]> {
    return repo.failuresOf(db, keys, FAILURE_DELAYS.windowSeconds, COUNTED_FAILURES);
  }
}

/**
 * The rule of FAILURE_DELAYS: ms an attempt must still wait given the failures of its pair and of its account, the
 * account's bound applying only when the address is not clean.
 */
function decide(
  pair: Tally,
  account: Tally,
  clean: boolean,
): { allowed: true; clean: boolean } | { allowed: false; retryAfterSeconds: number; of: 'pair' | 'account' } {
  const pairWait = waitMs(pair, FAILURE_DELAYS.pair);
  const accountWait = clean ? 0 : waitMs(account, FAILURE_DELAYS.account);
  if (pairWait <= 0 && accountWait <= 0) return { allowed: true, clean };
  return {
    allowed: false,
    retryAfterSeconds: Math.max(1, Math.ceil(Math.max(pairWait, accountWait) / 1000)),
    of: pairWait >= accountWait ? 'pair' : 'account',
  };
}

/**
 * Seconds an attempt waits after the latest of `failures` (FAILURE_DELAYS, AUTH-8): none below `rule.free`, then
 * 2^(failures − free), at most `rule.capSeconds`.
 */
export function delaySeconds(failures: number, rule: { free: number; capSeconds: number }): number {
  return failures < rule.free ? 0 : Math.min(rule.capSeconds, 2 ** (failures - rule.free));
}

/** ms still to wait after `tally`'s failures (≤ 0: none). */
function waitMs(tally: Tally, rule: { free: number; capSeconds: number }): number {
  if (tally.failures < rule.free) return 0;
  return delaySeconds(tally.failures, rule) * 1000 - (tally.sinceLastMs ?? 0);
}
