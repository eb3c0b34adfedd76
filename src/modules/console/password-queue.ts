import pLimit, { type LimitFunction } from 'p-limit';

/**
 * Runs password checks (scrypt: ~128 MiB and a few hundred ms of CPU each) at most `concurrency` at a time,
 * with at most `queue` more waiting. A flood of sign-ins therefore costs a bounded amount of memory and CPU: the
 * rest is refused at once instead of piling up behind the event loop, the thread pool and the database pool
 * that integrators' requests need.
 */
export class PasswordCheckQueue {
  private readonly limit: LimitFunction;

  /** @param concurrency checks run at once (>= 1); @param queue checks that may wait (>= 0). */
  constructor(private readonly concurrency: number, private readonly queue: number) {
    this.limit = pLimit(concurrency);
  }

  /** True when a new check would be refused: callers shed the request before doing any other work for it. */
  get saturated(): boolean {
    return this.limit.activeCount + this.limit.pendingCount >= this.concurrency + this.queue;
  }

  /**
   * Runs `check` when a slot is free.
   * @throws PasswordQueueFull at once when `concurrency` checks run and `queue` wait already.
   */
  run<T>(check: () => Promise<T>): Promise<T> {
    if (this.saturated) return Promise.reject(new PasswordQueueFull());
    return this.limit(check);
  }
}

/** Thrown by PasswordCheckQueue.run when the queue is full. */
export class PasswordQueueFull extends Error {
  constructor() {
    super('Too many sign-ins are being checked at once');
  }
}
