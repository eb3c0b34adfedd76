import { setTimeout as sleep } from 'node:timers/promises';
import pLimit, { type LimitFunction } from 'p-limit';

/**
 * Admission and concurrency for sign-ins. Password checks (scrypt: ~128 MiB and a few hundred ms of CPU each)
 * run at most `concurrency` at a time, and at most `concurrency + queue` sign-ins are in progress at all (their
 * short database steps included). A flood of sign-ins therefore costs a bounded amount of memory, CPU and database
 * work: the rest is refused at once instead of piling up in the event loop, the thread pool and the database pool
 * that integrators' requests need. Each slot also rests after a check for as long as it takes to keep hashing to
 * `cpuPercent` of its time, so that even a flood that keeps the slots busy leaves the machine's cores and memory
 * bandwidth to the API (AUTH-8).
 */
export class PasswordCheckQueue {
  private readonly limit: LimitFunction;
  private inProgress = 0;

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
    };
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
