/**
 * The CPU budget's window, in ms: checks may run back to back until they have used `cpuPercent` of this much time
 * beyond their share, so that a short burst (a colleague and an attacker's first guesses) is checked at once.
 */
const BUDGET_WINDOW_MS = 20_000;

/** What a sign-in's place in line depends on. */
export interface CheckTicket {
  /** From a clean address (AUTH-8): goes before every other waiting sign-in and may use the budget's reserve. */
  clean: boolean;
  /** performance.now() by which the sign-in must be answered; it never starts a check it cannot expect to end by then. */
  deadline: number;
}

/** A check that ran (with what it returned), or a sign-in refused as busy: no place in time, or pushed out of line. */
export type CheckOutcome<T> = { ran: true; value: T } | { ran: false };

/** How the checks are bounded (config: PASSWORD_HASH_*). */
export interface PasswordCheckQueueOptions {
  /** Checks under way at once (>= 1); with two or more, one of them is kept for clean sign-ins. */
  concurrency: number;
  /** Sign-ins that may wait for a check (>= 0); one more pushes the last in line out. */
  waiting: number;
  /**
   * Longest a sign-in waits for its check to start, in ms (one from an address that is not clean, a random time
   * between half and all of it).
   */
  holdMs: number;
  /** Share of one core's time (1-100) checks may take over the budget's window; 100: no budget. */
  cpuPercent?: number;
  /** Longest a sign-in takes from its arrival to its answer, in ms (SIGN_IN_ANSWER_MS; default 4000). */
  answerMs?: number;
}

interface Waiter {
  clean: boolean;
  timer: NodeJS.Timeout | null;
  start(): void;
  refuse(): void;
}

/**
 * Password checks of sign-ins (argon2id: 46 MiB and tens of ms of CPU each; an older scrypt hash ~128 MiB and up to a second), bounded in number, in time and in
 * CPU (AUTH-8). At most `concurrency` run at once, and with two or more, one place is kept for clean sign-ins, so that
 * an operator at a clean address never waits for an attacker's check to end. The others wait in one line, clean
 * sign-ins first, then in arrival order, at most `waiting` of them (beyond, the last in line is refused). No sign-in
 * waits longer than `holdMs`, nor past the moment its check could still be expected to end by its deadline (from the
 * durations of the last checks): the line is bounded in time, not only in length. A token bucket keeps checking to
 * `cpuPercent` of one core over BUDGET_WINDOW_MS; its second half is kept for clean sign-ins, so that a flood that used
 * up the rest still leaves an operator's check to start at once.
 */
export class PasswordCheckQueue {
  private readonly concurrency: number;
  /** Places the checks of sign-ins that are not clean may take. */
  private readonly shared: number;
  private readonly capacity: number;
  private readonly holdMs: number;
  private readonly answerMs: number;
  private running = 0;
  private readonly line: Waiter[] = [];
  /** Expected duration of one check, in ms: a moving average of the last ones. */
  private expectedMs = 500;
  /** ms of checking the budget allows now; refilled at `rate` per ms. Infinite: no budget. */
  private tokens: number;
  private refilledAt = performance.now();
  private readonly rate: number;
  private readonly bucket: number;
  private readonly reserve: number;
  private wake: NodeJS.Timeout | null = null;

  constructor(options: PasswordCheckQueueOptions) {
    this.concurrency = Math.max(1, options.concurrency);
    this.shared = this.concurrency > 1 ? this.concurrency - 1 : 1;
    this.capacity = Math.max(0, options.waiting);
    this.holdMs = Math.max(0, options.holdMs);
    this.answerMs = options.answerMs ?? 4000;
    const share = Math.min(100, Math.max(1, options.cpuPercent ?? 100)) / 100;
    this.rate = share;
    this.bucket = share >= 1 ? Number.POSITIVE_INFINITY : BUDGET_WINDOW_MS * this.rate;
    this.reserve = this.bucket / 2;
    this.tokens = this.bucket;
  }

  /** Sign-ins waiting for a check now. */
  get waitingCount(): number {
    return this.line.length;
  }

  /**
   * Runs `check` (the sign-in's database steps and its hash) when the sign-in's turn comes, or refuses it.
   * @returns `{ ran: true, value }` once the check ended, or `{ ran: false }` when it was refused as busy (never
   * started). Rejects as `check` does.
   */
  run<T>(check: () => Promise<T>, ticket: CheckTicket): Promise<CheckOutcome<T>> {
    return new Promise<CheckOutcome<T>>((resolve, reject) => {
      const now = performance.now();
      const waiter: Waiter = {
        clean: ticket.clean,
        timer: null,
        refuse: () => {
          if (waiter.timer) clearTimeout(waiter.timer);
          resolve({ ran: false });
        },
        start: () => {
          if (waiter.timer) clearTimeout(waiter.timer);
          this.running += 1;
          const started = performance.now();
          Promise.resolve()
            .then(check)
            .then((value) => resolve({ ran: true, value }), reject)
            .finally(() => this.ended(performance.now() - started));
        },
      };
      this.enter(waiter);
      this.pump();
      if (this.line.length > this.capacity) this.line.pop()!.refuse();
      if (!this.line.includes(waiter)) return;
      // Its turn must come in time for the check to end by the deadline (a stalled check never makes the expected
      // duration so long that nothing starts: a free place is always taken). The others of a flood give up at random
      // times, so that their refusals are spread out instead of written together.
      const startBy = Math.min(
        now + this.holdMs * (ticket.clean ? 1 : 0.5 + Math.random() / 2),
        ticket.deadline - Math.min(this.expectedMs, this.answerMs / 2),
      );
      if (startBy <= now) {
        this.leave(waiter);
        waiter.refuse();
        return;
      }
      waiter.timer = setTimeout(() => {
        this.leave(waiter);
        waiter.refuse();
      }, startBy - now);
    });
  }

  /** Puts a waiter in its place in line: after the clean ones if it is clean, else at the end. */
  private enter(waiter: Waiter): void {
    const at = waiter.clean ? this.line.findIndex((w) => !w.clean) : -1;
    if (at < 0) this.line.push(waiter);
    else this.line.splice(at, 0, waiter);
  }

  private leave(waiter: Waiter): void {
    const at = this.line.indexOf(waiter);
    if (at >= 0) this.line.splice(at, 1);
  }

  /** Starts the first in line while a place is free for it and the budget allows it. */
  private pump(): void {
    while (this.line.length) {
      const first = this.line[0]!;
      if (this.running >= (first.clean ? this.concurrency : this.shared)) return;
      const short = this.budgetShortMs(first.clean);
      if (short > 0) {
        this.wakeIn(short);
        return;
      }
      this.line.shift();
      first.start();
    }
  }

  private ended(durationMs: number): void {
    this.running -= 1;
    this.expectedMs = 0.7 * this.expectedMs + 0.3 * durationMs;
    if (Number.isFinite(this.bucket)) {
      this.refill();
      // A check stalled by a crushed machine runs the budget into debt, but never so deep that it takes more than the
      // budget's window to recover.
      this.tokens = Math.max(-this.reserve, this.tokens - durationMs);
    }
    this.pump();
  }

  /** ms until the budget lets a check start (0: now); clean sign-ins may dig into the reserve. */
  private budgetShortMs(clean: boolean): number {
    if (!Number.isFinite(this.bucket)) return 0;
    this.refill();
    const floor = clean ? 0 : this.reserve;
    return this.tokens > floor ? 0 : Math.ceil((floor - this.tokens) / this.rate) + 1;
  }

  private refill(): void {
    const now = performance.now();
    this.tokens = Math.min(this.bucket, this.tokens + (now - this.refilledAt) * this.rate);
    this.refilledAt = now;
  }

  private wakeIn(ms: number): void {
    if (this.wake) clearTimeout(this.wake);
    this.wake = setTimeout(() => {
      this.wake = null;
      this.pump();
    }, ms);
    this.wake.unref();
  }
}
