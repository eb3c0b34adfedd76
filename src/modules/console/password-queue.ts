import { setTimeout as sleep } from 'node:timers/promises';
import pLimit, { type LimitFunction } from 'p-limit';

/**
 * Admission and concurrency for sign-ins. Password checks (scrypt: ~128 MiB and a few hundred ms of CPU each)
 * run at most `concurrency` at a time, and at most `concurrency + queue` sign-ins are in progress at all (their
 * short database steps included). A flood of sign-ins therefore costs a bounded amount of memory, CPU and database
 * work: the rest never reach the event loop's real work, the thread pool or the database pool that integrators'
 * requests need. Beyond the queue a sign-in is first held unread (see {@link hold}): an attacker's connection then
 * waits instead of being answered at once and coming straight back, so a flood arrives at the pace of the password
 * checks rather than as fast as refusals can be written. Each slot also rests after a check for as long as it takes
 * to keep hashing to `cpuPercent` of its time, so that even a flood that keeps the slots busy leaves the machine's
 * cores and memory bandwidth to the API (AUTH-8).
 */
export class PasswordCheckQueue {
  private readonly limit: LimitFunction;
  private inProgress = 0;
  /** Held sign-ins, oldest first: each is handed the next free place, or gives up at its deadline. */
  private readonly held: Array<{ admit: (release: () => void) => void }> = [];

  private readonly restFactor: number;

  /**
   * @param concurrency checks run at once (>= 1); @param queue sign-ins that may wait beyond them (>= 0);
   * @param cpuPercent share of its time (1-100) a slot may spend checking; 100: no rest.
   */
  constructor(
    private readonly concurrency: number,
    private readonly queue: number,
    cpuPercent = 100,
  ) {
    this.limit = pLimit(concurrency);
    this.restFactor = 100 / Math.min(100, Math.max(1, cpuPercent)) - 1;
  }

  /** True when a new sign-in would be refused: callers shed the request before doing any other work for it. */
  get saturated(): boolean {
    return this.inProgress >= this.concurrency + this.queue;
  }

  /**
   * Admits one sign-in for the whole of its work (call `release` when done, also on failure).
   * @returns the release function, or null when `concurrency + queue` sign-ins are already in progress.
   */
  admit(): (() => void) | null {
    if (this.saturated) return null;
    this.inProgress += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inProgress -= 1;
      this.handOver();
    };
  }

  /**
   * Admits a sign-in now, or holds it until a place is free: held sign-ins get places in arrival order. A held sign-in
   * gives up after a random time between half and all of `holdMs`, so the refusals of a burst that arrived together
   * are spread out instead of written together.
   * @returns the release function (as {@link admit}), or null: no place within the hold, or `maxHeld` already held
   * (then at once), or `holdMs` is 0.
   */
  hold(holdMs: number, maxHeld: number): Promise<(() => void) | null> {
    const now = this.admit();
    if (now || holdMs <= 0 || this.held.length >= maxHeld) return Promise.resolve(now);
    return new Promise((resolve) => {
      const waiter = {
        admit: (release: () => void) => {
          clearTimeout(timer);
          resolve(release);
        },
      };
      const timer = setTimeout(
        () => {
          const at = this.held.indexOf(waiter);
          if (at >= 0) this.held.splice(at, 1);
          resolve(null);
        },
        holdMs * (0.5 + Math.random() / 2),
      );
      this.held.push(waiter);
    });
  }

  /** Gives free places to held sign-ins, oldest first. */
  private handOver(): void {
    while (this.held.length && !this.saturated) {
      const release = this.admit();
      if (!release) return;
      this.held.shift()!.admit(release);
    }
  }

  /**
   * Runs a password check of an admitted sign-in when one of the `concurrency` slots is free. The result comes as soon
   * as the check ends; the slot then rests (check duration × (100 / cpuPercent − 1)) before the next check may start.
   */
  run<T>(check: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      void this.limit(async () => {
        const started = performance.now();
        await check().then(resolve, reject);
        const rest = (performance.now() - started) * this.restFactor;
        if (rest > 0) await sleep(rest);
      });
    });
  }
}
