import { createHash } from 'node:crypto';
import { AppError, FieldErrors, ValidationError } from '../../lib/errors.js';
import { EXCEPTION_REASONS } from '../orders/exception-codes.js';
import { FILING_STATUSES, type FilingStatus } from '../orders/order-statuses.js';
import type { OrderRow } from '../orders/orders.repo.js';
import { withFields } from '../../lib/objects.js';

/**
 * The filing state machine (FIL-1 to FIL-10) as one pure table plus
 * guards. Nothing here touches the database: `planTransition` turns (current order, request, today) into
 * the change to write, or throws.
 *
 * Decisions where the public API is silent (it does not show transitions between other states; FIL-2):
 * - submitted -> pending is the only forward move between non-terminal, non-exception states;
 *   pending -> submitted (backwards) and X -> X no-ops are refused with 409 invalid_transition.
 * - exception -> exception is allowed when the exception code or message changes (a second problem found
 *   while the first is open, "any non-terminal -> exception"); re-reporting the identical exception is a
 *   no-op and refused with 409 so a doubled CLI run cannot send a duplicate event.
 * - Resuming from exception goes to submitted or pending (the caller names which).
 * - filed needs a filingDate: the given one (YYYY-MM-DD, a real date, not after today in UTC: a US filing
 *   date is never ahead of the UTC date) or today (UTC).
 * - ein is accepted only when an EIN order moves to filed. In live it is required (the filing team reads
 *   it off the IRS CP 575); in test, when omitted, a test EIN `00-NNNNNNN` is derived from the order id
 *   (prefix 00 is assigned to no IRS campus, so a test EIN never equals a real one).
 */

/** filed and cancelled end an order's life (FIL-1). */
const TERMINAL_STATUSES: readonly FilingStatus[] = ['filed', 'cancelled'];

/** The one transition table: from -> the statuses it may move to. Terminal statuses have none. */
const TRANSITIONS: Readonly<Record<FilingStatus, readonly FilingStatus[]>> = {
  submitted: ['pending', 'exception', 'filed', 'cancelled'],
  pending: ['exception', 'filed', 'cancelled'],
  exception: ['submitted', 'pending', 'exception', 'filed', 'cancelled'],
  filed: [],
  cancelled: [],
};

/** Longest exceptionMessage accepted, in characters. */
export const MAX_EXCEPTION_MESSAGE = 2000;

/** EIN format of a company (CO-1, FIL-7): two digits, hyphen, seven digits. */
const EIN_PATTERN = /^\d{2}-\d{7}$/;

/** What a caller asks for. Dates are 'YYYY-MM-DD'; exceptionCode is a code of the FIL-12 table, e.g. "465". */
export interface TransitionRequest {
  filingStatus: string;
  /** "465"; the number 465 is accepted too and treated as "465". */
  exceptionCode?: string | number | null;
  exceptionMessage?: string | null;
  filingDate?: string | null;
  ein?: string | null;
  /**
   * The status the caller saw (console confirmation pages): when the order has moved since, the transition is
   * refused with 409 instead of acting on a state nobody looked at.
   */
  expectedStatus?: string | null;
}

/** The parts of an order the guards read. */
export interface OrderState {
  id: string;
  orderType: string;
  environment: 'live' | 'test';
  filingStatus: FilingStatus;
  exceptionCode: string | null;
  exceptionMessage: string | null;
}

/** The change to write: the new status and the fields that go with it (null when they do not apply); filingDate 'YYYY-MM-DD'. */
export interface PlannedTransition {
  from: FilingStatus;
  to: FilingStatus;
  exceptionCode: string | null;
  exceptionReason: string | null;
  exceptionMessage: string | null;
  filingDate: string | null;
  /** Set only when an EIN order is filed. */
  ein: string | null;
}

/** Narrowing guard for statuses read from requests, the CLI and the database. */
export function isFilingStatus(value: string): value is FilingStatus {
  return (FILING_STATUSES as readonly string[]).includes(value);
}

/**
 * The columns of an orders row that {@link orderStateOf} reads; `filing_status` as any text, because orderStateOf
 * checks it rather than trusting the row.
 */
export type OrderStateColumns = Pick<
  OrderRow,
  'id' | 'order_type' | 'environment' | 'exception_code' | 'exception_message'
> & {
  filing_status: string;
};

/**
 * An orders row as the state machine sees it. @throws AppError internal_error (500) when the row's status is not a
 * filing status (the table's CHECK constraint makes that a schema drift, not a request's fault).
 */
export function orderStateOf(o: OrderStateColumns): OrderState {
  if (!isFilingStatus(o.filing_status)) throw new AppError('internal_error', `order ${o.id} has an unknown status`);
  return {
    id: o.id,
    orderType: o.order_type,
    environment: o.environment,
    filingStatus: o.filing_status,
    exceptionCode: o.exception_code,
    exceptionMessage: o.exception_message,
  };
}

/** True for filed and cancelled (TERMINAL_STATUSES): no transition leaves them. */
function isTerminal(status: FilingStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/** True when the table allows from -> to (ignoring the fields that go with the move). */
export function canTransition(from: FilingStatus, to: FilingStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/**
 * Checks a requested transition against the table and its guards and returns the change to write.
 * @param today 'YYYY-MM-DD' (UTC), the default filingDate and the latest one accepted.
 * @throws ValidationError (400) for a malformed request: unknown status, missing/unknown exceptionCode,
 *   bad filingDate or ein, a field that does not belong to the target status.
 * @throws AppError invalid_transition (409) when the order is terminal or the table forbids the move.
 */
export function planTransition(order: OrderState, given: TransitionRequest, today: string): PlannedTransition {
  const request = withStringCode(given);
  throwIfRequestIsMalformed(request, today);
  const to = request.filingStatus as FilingStatus;
  throwIfOrderMovedSinceSeen(order, request);
  throwIfOrderIsTerminal(order, to);
  throwIfTableForbids(order, to);
  throwIfExceptionIsUnchanged(order, request);
  const ein = einFor(order, request, to);
  return {
    from: order.filingStatus,
    to,
    exceptionCode: to === 'exception' ? (request.exceptionCode as string) : null,
    exceptionReason: to === 'exception' ? EXCEPTION_REASONS[request.exceptionCode as string] : null,
    exceptionMessage: to === 'exception' ? request.exceptionMessage?.trim() || null : null,
    filingDate: to === 'filed' ? (request.filingDate ?? today) : null,
    ein,
  };
}

// exceptionCode travels as a string ("465", FIL-4, EVT-3); a caller sending the number 465 means the same code.
function withStringCode(request: TransitionRequest): TransitionRequest {
  return typeof request.exceptionCode === 'number'
    ? withFields(request, { exceptionCode: String(request.exceptionCode) })
    : request;
}

/**
 * Optimistic check for callers that showed the order first (see TransitionRequest.expectedStatus).
 * @throws AppError invalid_transition (409) when the order's status is no longer `request.expectedStatus`.
 */
function throwIfOrderMovedSinceSeen(order: OrderState, request: TransitionRequest): void {
  if (request.expectedStatus && request.expectedStatus !== order.filingStatus) {
    throw new AppError(
      'invalid_transition',
      `Order ${order.id} is now ${order.filingStatus}, not ${request.expectedStatus} as when you looked; reload it and decide again`,
    );
  }
}

/** Request-only checks (they do not depend on the order). @throws ValidationError (400) naming every bad field. */
function throwIfRequestIsMalformed(request: TransitionRequest, today: string): void {
  const errors = new FieldErrors();
  const to = request.filingStatus;
  if (!isFilingStatus(to)) {
    errors.add('filingStatus', `must be one of: ${FILING_STATUSES.join(', ')}`);
    errors.throwIfAny();
  }
  const code = request.exceptionCode == null ? request.exceptionCode : String(request.exceptionCode);
  if (to === 'exception') {
    if (!code) errors.add('exceptionCode', 'is required when filingStatus is exception');
    else if (!Object.hasOwn(EXCEPTION_REASONS, code))
      errors.add('exceptionCode', `'${code}' is not a filing exception code (460-499, listed in the OpenAPI document)`);
    if (request.exceptionMessage != null && request.exceptionMessage.length > MAX_EXCEPTION_MESSAGE)
      errors.add('exceptionMessage', `must be at most ${MAX_EXCEPTION_MESSAGE} characters`);
  } else {
    if (request.exceptionCode != null) errors.add('exceptionCode', 'is allowed only when filingStatus is exception');
    if (request.exceptionMessage != null)
      errors.add('exceptionMessage', 'is allowed only when filingStatus is exception');
  }
  if (request.filingDate != null) {
    if (to !== 'filed') errors.add('filingDate', 'is allowed only when filingStatus is filed');
    else if (!isCalendarDate(request.filingDate)) errors.add('filingDate', 'must be a date in the form YYYY-MM-DD');
    else if (request.filingDate > today) errors.add('filingDate', `cannot be in the future (today is ${today} UTC)`);
  }
  if (request.ein != null) {
    if (to !== 'filed') errors.add('ein', 'is allowed only when filingStatus is filed');
    else if (!EIN_PATTERN.test(request.ein))
      errors.add('ein', 'must look like 12-3456789 (two digits, hyphen, seven digits)');
  }
  errors.throwIfAny();
}

/**
 * filed and cancelled are terminal: any move out of them is a 409 naming the order and both statuses.
 * @throws AppError invalid_transition (409).
 */
function throwIfOrderIsTerminal(order: OrderState, to: FilingStatus): void {
  if (isTerminal(order.filingStatus)) {
    throw new AppError(
      'invalid_transition',
      `Order ${order.id} is ${order.filingStatus}, a terminal status; it cannot move to ${to}`,
      {
        filingStatus: order.filingStatus,
      },
    );
  }
}

/**
 * A move the table does not list (backwards, or staying put): 409 naming what is allowed instead.
 * @throws AppError invalid_transition (409).
 */
function throwIfTableForbids(order: OrderState, to: FilingStatus): void {
  if (canTransition(order.filingStatus, to)) return;
  const why =
    order.filingStatus === to ? `it is already ${to}` : `${order.filingStatus} -> ${to} is not a filing transition`;
  throw new AppError(
    'invalid_transition',
    `Order ${order.id} cannot move from ${order.filingStatus} to ${to}: ${why}. Allowed from ${order.filingStatus}: ${TRANSITIONS[order.filingStatus].join(', ')}`,
    {
      filingStatus: order.filingStatus,
    },
  );
}

/** exception -> exception must report something new (another code or message). @throws AppError invalid_transition (409). */
function throwIfExceptionIsUnchanged(order: OrderState, request: TransitionRequest): void {
  if (order.filingStatus !== 'exception' || request.filingStatus !== 'exception') return;
  const sameCode = order.exceptionCode === request.exceptionCode;
  const sameMessage = (order.exceptionMessage ?? null) === (request.exceptionMessage?.trim() || null);
  if (sameCode && sameMessage) {
    throw new AppError(
      'invalid_transition',
      `Order ${order.id} is already in exception ${order.exceptionCode} with the same message; report a different code or message`,
      {
        filingStatus: order.filingStatus,
      },
    );
  }
}

/** The EIN to record when an EIN order is filed (see the module comment); null otherwise. */
function einFor(order: OrderState, request: TransitionRequest, to: FilingStatus): string | null {
  if (request.ein != null && order.orderType !== 'ein') {
    throw new ValidationError([
      { field: 'ein', message: `applies only to EIN orders; order ${order.id} is a ${order.orderType} order` },
    ]);
  }
  if (to !== 'filed' || order.orderType !== 'ein') return null;
  // FIL-7: the IRS assigns no EIN with prefix 00, which test EINs use, so a live company never gets a test-looking one.
  if (request.ein?.startsWith('00-') && order.environment === 'live')
    throw new ValidationError([
      { field: 'ein', message: 'cannot start with 00 in live: the IRS assigns no such prefix (test EINs use it)' },
    ]);
  if (request.ein) return request.ein;
  if (order.environment === 'test') return testEinFor(order.id);
  throw new ValidationError([
    { field: 'ein', message: `is required to file EIN order ${order.id}: enter the EIN the IRS assigned (12-3456789)` },
  ]);
}

/** A stable, obviously fake EIN for a test-environment order: `00-` + 7 digits from the order id's hash. */
function testEinFor(orderId: string): string {
  const n = createHash('sha256').update(orderId).digest().readUInt32BE(0) % 10_000_000;
  return `00-${String(n).padStart(7, '0')}`;
}

/** Today's date in UTC, 'YYYY-MM-DD'. */
export function todayUtc(now: Date = new Date()): string {
  return now.toISOString().slice(0, 10);
}

function isCalendarDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const d = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value;
}
