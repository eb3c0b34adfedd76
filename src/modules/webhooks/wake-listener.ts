import pg from 'pg';
import { listenOn } from '../../lib/db.js';

/** How long to wait before opening the LISTEN connection again after it broke (ms). */
const RELISTEN_DELAY_MS = 1000;

/**
 * A LISTEN connection of its own on `channels` that calls `wake` on every notification and once when (re)opened
 * (WH-16). When it breaks it is opened again every {@link RELISTEN_DELAY_MS} until it works, each failure told to
 * `failed`; meanwhile the dispatcher's one-second poll keeps deliveries moving, only later.
 */
export class WakeListener {
  private client: pg.Client | null = null;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly channels: string[],
    private readonly wake: () => void,
    private readonly failed: (err: unknown, context: 'lost' | 'reopen') => void,
  ) {}

  /** Opens the connection. @throws when it cannot be opened (the caller decides whether to start at all). */
  async open(): Promise<void> {
    const c = new pg.Client(this.config);
    c.on('notification', () => this.wake());
    c.on('error', (err) => {
      if (this.closed || this.client !== c) return;
      this.failed(err, 'lost');
      this.client = null;
      c.end().catch(() => undefined);
      this.reopenLater();
    });
    try {
      await c.connect();
      await listenOn(c, this.channels);
    } catch (err) {
      await c.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await c.end().catch(() => undefined);
      return;
    }
    this.client = c;
    this.wake();
  }

  /** Closes the connection and stops reopening it. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    await this.client?.end().catch(() => undefined);
  }

  private reopenLater(): void {
    if (this.closed) return;
    this.retry = setTimeout(
      () =>
        void this.open().catch((err) => {
          this.failed(err, 'reopen');
          this.reopenLater();
        }),
      RELISTEN_DELAY_MS,
    );
  }
}
