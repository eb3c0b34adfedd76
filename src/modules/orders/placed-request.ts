/*
 * The request an order group keeps (ORD-12), without repeating its orders (ORD-19). Each order's `details` is its
 * product object as requested, so a request is usually nothing but its orders' details under their request keys plus
 * the user, the filing state and the company: then the group keeps no copy (`order_groups.request` NULL) and the
 * request is put together again from the orders when it is read. Whether that gives back exactly what was requested
 * is checked when the group is placed, so a request that carried anything else is kept whole.
 */

/** The request key of each product an order can carry; a `dba` order comes from a formation package, not a key. */
const REQUEST_KEYS: Record<string, string> = {
  formation: 'formation',
  ein: 'ein',
  annual_report: 'annualReport',
  registered_agent: 'registeredAgent',
  foreign_qualification: 'foreignQualification',
};

/** What the placement added to a product object that the request did not carry (ORD-12 keeps the rest as sent). */
const ADDED_BY_PLACEMENT: Record<string, string> = {
  formation: 'formationTier',
  foreign_qualification: 'agentSource',
};

/** The group a request is put together for: its user, filing state, company, and whether it formed that company. */
export interface RequestGroup {
  userId: string;
  filingState: string;
  companyId: string;
  formsCompany: boolean;
}

/** An order of the group: its product (`orders.order_type`) and `details`. */
export interface RequestOrder {
  orderType: string;
  details: Record<string, unknown> | null;
}

/**
 * The request of a group that kept none (ORD-19): userId, filingState, companyId unless the group formed its company,
 * and each order's details under its product's request key, without what the placement added (a formation's
 * `formationTier`, a foreign qualification's `agentSource`).
 */
export function requestFromOrders(group: RequestGroup, orders: RequestOrder[]): Record<string, unknown> {
  const request: Record<string, unknown> = { userId: group.userId, filingState: group.filingState };
  if (!group.formsCompany) request.companyId = group.companyId;
  for (const o of orders) {
    const key = REQUEST_KEYS[o.orderType];
    if (!key || !o.details) continue;
    const added = ADDED_BY_PLACEMENT[o.orderType];
    if (!added) request[key] = o.details;
    else {
      const { [added]: _, ...asRequested } = o.details;
      request[key] = asRequested;
    }
  }
  return request;
}

/**
 * What the group keeps of `request` (already without the EIN tax id, ORD-EIN-6): null when
 * {@link requestFromOrders} gives it back exactly from the group's orders (ORD-19), else the request itself.
 */
export function requestToKeep(
  request: Record<string, unknown>,
  group: RequestGroup,
  orders: RequestOrder[],
): Record<string, unknown> | null {
  return sameJson(request, requestFromOrders(group, orders)) ? null : request;
}

/**
 * Whether two values are equal as JSON documents: keys in any order, a key whose value is undefined absent (as
 * JSON.stringify and jsonb leave it out).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((v, i) => sameJson(v, other[i]));
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let present = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    present += 1;
    if (!Object.hasOwn(y, k) || !sameJson(x[k], y[k])) return false;
  }
  for (const k in y) if (y[k] !== undefined) present -= 1;
  return present === 0;
}
