import { recordAttempts, type FinishedAttempt, type Recorder } from './attempt-recorder.js';

/** Outcomes written per statement at most; more wait for the next write. */
const RECORD_BATCH_MAX = 500;

/**
 * Finished attempts of one dispatcher waiting to be written (WH-15): one write at a time, of everything that finished
 * meanwhile (at most {@link RECORD_BATCH_MAX}), each batch in one transaction. `written` is told of every batch once
 * its write has ended, succeeded or failed: on failure the rows stay leased and are claimed again after the lease
 * (at least once). `failed` is told the write's error.
 */
export class OutcomeBatcher {
  private finished: FinishedAttempt[] = [];
  private recording: Promise<void> | null = null;

  constructor(
    private readonly recorder: Recorder,
    private readonly written: (batch: FinishedAttempt[]) => void,
    private readonly failed: (err: unknown, batch: FinishedAttempt[]) => void,
  ) {}

  /** True when nothing waits and nothing is being written. */
  get idle(): boolean {
    return !this.recording && !this.finished.length;
  }

  /** Queues one finished attempt and starts a write unless one is under way. */
  add(attempt: FinishedAttempt): void {
    this.finished.push(attempt);
    this.flush();
  }

  /** Resolves when the write under way (if any) has ended. */
  async settled(): Promise<void> {
    await this.recording;
  }

  private flush(): void {
    if (this.recording || !this.finished.length) return;
    const batch = this.finished.slice(0, RECORD_BATCH_MAX);
    this.finished = this.finished.slice(batch.length);
    this.recording = recordAttempts(this.recorder, batch)
      .catch((err) => this.failed(err, batch))
      .finally(() => {
        this.recording = null;
        this.written(batch);
        this.flush();
      });
  }
}
