import type { Db } from '../../lib/db.js';
import { findUncheckedKeyHashes } from './api-keys.repo.js';

/**
 * The hashes of the active keys issued before keys carried a checksum (AUTH-3), kept in process memory: a key of
 * AUTH-1's shape without a valid checksum is looked up only when its hash is here, so made-up keys cost no database
 * read (AUTH-14). No such key can be issued any more, so the set only shrinks; it is read again after every change
 * that may have added to it ({@link invalidate}: a '*' notification, or the notifications lost or heard again), and,
 * while changes are not heard, when it is older than `unheardMaxAgeMs`. Concurrent readers share one read. A revoked
 * key left in the set costs its own look-up only (which then refuses it).
 */
export class UncheckedKeyHashes {
  private hashes: Set<string> | null = null;
  private readAt = 0;
  private reading: Promise<Set<string>> | null = null;
  /** Bumped by every invalidation: a read that overlapped one is used but not kept. */
  private generation = 0;

  /**
   * @param db where keys are read.
   * @param hearsChanges whether changes to api_keys are being heard right now (the key cache's listening connection).
   * @param unheardMaxAgeMs longest the set is trusted while changes are not heard, ms.
   */
  constructor(
    private readonly db: Db,
    private readonly hearsChanges: () => boolean,
    private readonly unheardMaxAgeMs = 1000,
  ) {}

  /** True when `keyHash` (SHA-256 hex) is the hash of an active key issued without a checksum. */
  async has(keyHash: string, now = Date.now()): Promise<boolean> {
    const fresh = this.hashes && (this.hearsChanges() || now - this.readAt < this.unheardMaxAgeMs);
    const hashes = fresh ? this.hashes! : await this.read(now);
    return hashes.has(keyHash);
  }

  /** Drops what is known; the next question reads the set again. */
  invalidate(): void {
    this.generation += 1;
    this.hashes = null;
    this.reading = null;
  }

  private read(now: number): Promise<Set<string>> {
    if (this.reading) return this.reading;
    const generation = this.generation;
    const reading = findUncheckedKeyHashes(this.db)
      .then((rows) => {
        const hashes = new Set(rows);
        if (generation === this.generation) {
          this.hashes = hashes;
          this.readAt = now;
        }
        return hashes;
      })
      .finally(() => {
        if (this.reading === reading) this.reading = null;
      });
    this.reading = reading;
    return reading;
  }
}
