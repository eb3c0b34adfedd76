import type pg from 'pg';
import type { Config } from '../../config-types.js';
import {
  claimDueDeliveries,
  releaseLeases,
  renewLeases,
  type ClaimedDelivery,
  type ClaimRoom,
} from './dispatch.repo.js';

/** What the claim unit is given by its dispatcher. */
export interface ClaimSetup {
  pool: pg.Pool;
  config: Pick<
    Config,
    'webhookConcurrency' | 'webhookOrganizationConcurrency' | 'webhookEndpointConcurrency' | 'webhookLeaseMs'
  >;
  /** Names the process in leases (`leased_by`). */
  owner: string;
  /** What a claim may take per organization and endpoint beyond the rows queued and sending (DispatchQueues). */
  room(): ClaimRoom;
  /** Takes the rows of each claim, to schedule them. */
  claimed(rows: ClaimedDelivery[]): void;
  /** A claim (`claim`) or a lease renewal (`renew`) failed; the next wake-up or renewal tries again. */
  failed(err: unknown, what: 'claim' | 'renew'): void;
}

/** A claimed row until its outcome is written, and when it was claimed (for lease renewals). */
interface Held {
  row: ClaimedDelivery;
  claimedAt: number;
}

/**
 * The dispatcher's claim unit (WH-15, WH-16, WH-17): claims due deliveries under a lease while the process holds
 * fewer than twice WEBHOOK_CONCURRENCY rows (one cap's worth sending, one queued ahead of the free slots), keeps
 * every claimed row until its outcome is written ({@link release}) or it is handed back unstarted ({@link handBack}),
 * and renews the leases of rows held for a third of the lease. Wake-ups during a claim are folded into one more
 * claim after it.
 */
export class DeliveryClaims {
  // Claimed rows until their outcome is recorded: at most twice WEBHOOK_CONCURRENCY.
  private readonly held = new Map<string, Held>();
  private claiming = false;
  private claimAgain = false;
  private stopped = false;
  private renewer: NodeJS.Timeout | undefined;

  constructor(private readonly setup: ClaimSetup) {}

  /** Rows claimed and not yet recorded or handed back. */
  get holding(): number {
    return this.held.size;
  }

  /** True while a claim is under way. */
  get busy(): boolean {
    return this.claiming;
  }

  /** Starts renewing the leases of held rows, every third of WEBHOOK_LEASE_MS (at least every 100 ms). */
  startRenewing(): void {
    const every = Math.max(100, Math.floor(this.setup.config.webhookLeaseMs / 3));
    this.renewer = setInterval(() => this.renew(every), every);
  }

  /** Stops renewing; rows still held come back to every dispatcher when their lease runs out. */
  stopRenewing(): void {
    clearInterval(this.renewer);
  }

  /** Claims now, or once more after the claim under way. */
  wake(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = true;
    void this.claim()
      .catch((err) => this.setup.failed(err, 'claim'))
      .finally(() => {
        this.claiming = false;
        if (this.claimAgain) {
          this.claimAgain = false;
          if (this.free() > 0) this.wake();
        }
      });
  }

  /** Claims no more; rows a claim under way brings back are handed back at once. */
  stop(): void {
    this.stopped = true;
  }

  /** Forgets rows whose outcome was written (recording it released their lease). */
  release(rows: ClaimedDelivery[]): void {
    for (const row of rows) this.held.delete(row.id);
  }

  /** Hands rows never started back to the other processes now rather than after their lease. */
  async handBack(rows: ClaimedDelivery[]): Promise<void> {
    this.release(rows);
    if (rows.length)
      await releaseLeases(
        this.setup.pool,
        this.setup.owner,
        rows.map((r) => r.id),
      ).catch(() => undefined);
  }

  private free(): number {
    return 2 * this.setup.config.webhookConcurrency - this.held.size;
  }

  private async claim(): Promise<void> {
    const { config, pool, owner } = this.setup;
    while (!this.stopped && this.free() > 0) {
      const limit = this.free();
      const rows = await claimDueDeliveries(pool, {
        owner,
        limit,
        endpointCap: 2 * config.webhookEndpointConcurrency,
        organizationCap: 2 * config.webhookOrganizationConcurrency,
        room: this.setup.room(),
        leaseMs: config.webhookLeaseMs,
      });
      if (this.stopped) return this.handBack(rows);
      const claimedAt = Date.now();
      for (const row of rows) this.held.set(row.id, { row, claimedAt });
      this.setup.claimed(rows);
      if (rows.length < limit) return;
    }
  }

  private renew(every: number): void {
    const cutoff = Date.now() - every;
    const ids = [...this.held.values()].filter((h) => h.claimedAt <= cutoff).map((h) => h.row.id);
    if (ids.length)
      renewLeases(this.setup.pool, this.setup.owner, ids, this.setup.config.webhookLeaseMs).catch((err) =>
        this.setup.failed(err, 'renew'),
      );
  }
}
