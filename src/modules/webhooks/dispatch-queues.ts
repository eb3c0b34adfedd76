import type { ClaimedDelivery, ClaimRoom } from './dispatch.repo.js';

/** The caps on attempts in flight in one process (WH-17): in all, per organization and per endpoint. */
export interface SendCaps {
  /** WEBHOOK_CONCURRENCY. */
  total: number;
  /** WEBHOOK_ORGANIZATION_CONCURRENCY. */
  organization: number;
  /** WEBHOOK_ENDPOINT_CONCURRENCY. */
  endpoint: number;
}

/**
 * The rows one dispatcher claimed and has not started, and the attempts it has under way, counted in all, per
 * organization and per endpoint (WH-17). Rows are started round-robin across organizations, and within an
 * organization round-robin across its endpoints, each within its cap: an organization with many endpoints gets one
 * turn like any other, and never more than `caps.organization` attempts at once. In memory only; the rows stay
 * leased in the database (WH-16).
 */
export class DispatchQueues {
  // Organization -> endpoint -> rows, oldest first. Map order is the round-robin order: a served entry moves last.
  private readonly queued = new Map<string, Map<string, ClaimedDelivery[]>>();
  private readonly sendingByOrganization = new Map<string, number>();
  private readonly sendingByEndpoint = new Map<string, number>();
  private queuedCount = 0;
  private sendingCount = 0;

  constructor(private readonly caps: SendCaps) {}

  /** Attempts under way. */
  get sending(): number {
    return this.sendingCount;
  }

  /** Rows waiting for a slot. */
  get waiting(): number {
    return this.queuedCount;
  }

  /** Queues claimed rows behind those of their endpoint. */
  add(rows: ClaimedDelivery[]): void {
    for (const row of rows) {
      let endpoints = this.queued.get(row.organization_id);
      if (!endpoints) {
        endpoints = new Map();
        this.queued.set(row.organization_id, endpoints);
      }
      const list = endpoints.get(row.endpoint_id);
      if (list) list.push(row);
      else endpoints.set(row.endpoint_id, [row]);
      this.queuedCount += 1;
    }
  }

  /**
   * The next row to start, counted as sending from now on, or null when every queued row waits for a cap: the
   * process's, its organization's or its endpoint's. Call {@link done} when its attempt's answer is in.
   */
  next(): ClaimedDelivery | null {
    if (this.sendingCount >= this.caps.total) return null;
    for (const [organizationId, endpoints] of this.queued) {
      if (count(this.sendingByOrganization, organizationId) >= this.caps.organization) continue;
      for (const [endpointId, list] of endpoints) {
        if (count(this.sendingByEndpoint, endpointId) >= this.caps.endpoint) continue;
        const row = list.shift()!;
        moveLastOrDrop(endpoints, endpointId, list.length > 0);
        moveLastOrDrop(this.queued, organizationId, endpoints.size > 0);
        this.queuedCount -= 1;
        this.sendingCount += 1;
        add(this.sendingByOrganization, organizationId, 1);
        add(this.sendingByEndpoint, endpointId, 1);
        return row;
      }
    }
    return null;
  }

  /** Frees the slot of a row {@link next} gave out. */
  done(row: ClaimedDelivery): void {
    this.sendingCount -= 1;
    add(this.sendingByOrganization, row.organization_id, -1);
    add(this.sendingByEndpoint, row.endpoint_id, -1);
  }

  /**
   * What a claim may take beyond what is here: for every organization and endpoint with rows sending or queued,
   * twice its cap (one cap's worth under way, one queued ahead of a free slot) minus those rows. Others may get
   * twice their cap; the process's own room is the caller's.
   */
  claimRoom(): ClaimRoom {
    const held = { byOrganization: new Map(this.sendingByOrganization), byEndpoint: new Map(this.sendingByEndpoint) };
    for (const [organizationId, endpoints] of this.queued)
      for (const [endpointId, list] of endpoints) {
        add(held.byOrganization, organizationId, list.length);
        add(held.byEndpoint, endpointId, list.length);
      }
    const room = (map: Map<string, number>, cap: number) =>
      Object.fromEntries([...map].map(([id, n]) => [id, Math.max(0, 2 * cap - n)]));
    return {
      byOrganization: room(held.byOrganization, this.caps.organization),
      byEndpoint: room(held.byEndpoint, this.caps.endpoint),
    };
  }

  /** Removes and returns every row not started (to hand their leases back). */
  drain(): ClaimedDelivery[] {
    const rows = [...this.queued.values()].flatMap((endpoints) => [...endpoints.values()].flat());
    this.queued.clear();
    this.queuedCount = 0;
    return rows;
  }
}

function count(map: Map<string, number>, key: string): number {
  return map.get(key) ?? 0;
}

function add(map: Map<string, number>, key: string, n: number): void {
  const total = count(map, key) + n;
  if (total > 0) map.set(key, total);
  else map.delete(key);
}

// Round-robin: the entry just served goes to the back of the map's order, or leaves it when it has nothing left.
function moveLastOrDrop<V>(map: Map<string, V>, key: string, keep: boolean): void {
  const value = map.get(key)!;
  map.delete(key);
  if (keep) map.set(key, value);
}
