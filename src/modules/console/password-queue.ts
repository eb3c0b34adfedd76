import pLimit, { type LimitFunction } from 'p-limit';

/**
 * Admission and concurrency for sign-ins. Password checks (scrypt: ~128 MiB and a few hundred ms of CPU each)
 * run at most `concurrency` at a time, and at most `concurrency + queue` sign-ins are in progress at all (their
 * short database steps included). A flood of sign-ins therefore costs a bounded amount of memory, CPU and database
 * work: the rest is refused at once instead of piling up in the event loop, the thread pool and the database pool
 * that integrators' requests need.
 */
export class PasswordCheckQueue {
  private readonly limit: LimitFunction;
  private inProgress = 0;

  /** @param concurrency checks run at once (>= 1); @param queue sign-ins that may wait beyond them (>= 0). */
  constructor(private readonly concurrency: number, private readonly queue: number) {
    this.limit = pLimit(concurrency);
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

  /** Runs a password check of an admitted sign-in when one of the `concurrency` slots is free. */
  run<T>(check: () => Promise<T>): Promise<T> {
    return this.limit(check);
  }
}
