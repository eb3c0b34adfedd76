import { describe, expect, it } from 'vitest';
import { AppError, ValidationError } from '../src/lib/errors.js';
import { EXCEPTION_REASONS } from '../src/modules/orders/exception-codes.js';
import { FILING_STATUSES, type FilingStatus } from '../src/modules/orders/order-statuses.js';
import {
  orderStateOf,
  planTransition,
  type OrderState,
  type TransitionRequest,
} from '../src/modules/filings/transitions.js';

// The filing state machine (FIL-1, FIL-2) written out independently of the implementation's table, plus the
// documented decisions in transitions.ts.
const TERMINAL = new Set<FilingStatus>(['filed', 'cancelled']);
function specAllows(from: FilingStatus, to: FilingStatus): boolean {
  if (TERMINAL.has(from)) return false;
  if (to === 'exception' || to === 'filed' || to === 'cancelled') return true; // any non-terminal
  if (from === 'submitted' && to === 'pending') return true;
  if (from === 'exception' && (to === 'submitted' || to === 'pending')) return true; // resume
  return false;
}

const TODAY = '2025-06-15';
const order = (filingStatus: FilingStatus, extra: Partial<OrderState> = {}): OrderState => ({
  id: 'order_test',
  orderType: 'formation',
  environment: 'test',
  filingStatus,
  exceptionCode: filingStatus === 'exception' ? '462' : null,
  exceptionMessage: null,
  ...extra,
});
const requestFor = (to: FilingStatus): TransitionRequest =>
  to === 'exception' ? { filingStatus: to, exceptionCode: '465' } : { filingStatus: to };

function outcome(fn: () => unknown): { ok: true } | { ok: false; status: number; code: string; message: string } {
  try {
    fn();
    return { ok: true };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { ok: false, status: err.status, code: err.code, message: err.message };
  }
}

describe('the filing transition table', () => {
  for (const from of FILING_STATUSES) {
    for (const to of FILING_STATUSES) {
      it(`${from} -> ${to} is ${specAllows(from, to) ? 'allowed' : 'refused with 409'}`, () => {
        const result = outcome(() => planTransition(order(from), requestFor(to), TODAY));
        if (specAllows(from, to)) {
          expect(result).toEqual({ ok: true });
        } else {
          expect(result).toMatchObject({ ok: false, status: 409, code: 'invalid_transition' });
          const message = (result as { message: string }).message;
          expect(message).toContain('order_test');
          expect(message).toContain(from);
          expect(message).toContain(to);
          if (TERMINAL.has(from)) expect(message).toMatch(/terminal/);
        }
      });
    }
  }

  it('says so plainly when a filed order is moved again', () => {
    expect(() => planTransition(order('filed'), { filingStatus: 'pending' }, TODAY)).toThrow(
      'Order order_test is filed, a terminal status; it cannot move to pending',
    );
  });
});

describe('fields that go with a transition', () => {
  it('requires a known exception code and carries its standard reason and the trimmed message', () => {
    const plan = planTransition(
      order('pending'),
      { filingStatus: 'exception', exceptionCode: '465', exceptionMessage: '  Name taken in DE  ' },
      TODAY,
    );
    expect(plan).toMatchObject({
      from: 'pending',
      to: 'exception',
      exceptionCode: '465',
      exceptionReason: 'Entity name not available',
      exceptionMessage: 'Name taken in DE',
      filingDate: null,
    });
    const missing = outcome(() => planTransition(order('pending'), { filingStatus: 'exception' }, TODAY));
    expect(missing).toMatchObject({ status: 400, code: 'validation_error' });
    expect(() => planTransition(order('pending'), { filingStatus: 'exception' }, TODAY)).toThrow(/exceptionCode/);
    expect(() => planTransition(order('pending'), { filingStatus: 'exception', exceptionCode: '485' }, TODAY)).toThrow(
      /'485' is not a filing exception code/,
    );
  });

  it('accepts every code of the FIL-12 table', () => {
    for (const code of Object.keys(EXCEPTION_REASONS)) {
      expect(
        planTransition(order('submitted'), { filingStatus: 'exception', exceptionCode: code }, TODAY).exceptionReason,
      ).toBe(EXCEPTION_REASONS[code]);
    }
  });

  it('refuses exception fields on other statuses and a filingDate on anything but filed', () => {
    const err = catchValidation(() =>
      planTransition(
        order('submitted'),
        { filingStatus: 'pending', exceptionCode: '465', exceptionMessage: 'x', filingDate: '2025-01-01' },
        TODAY,
      ),
    );
    expect(err.errors.map((e) => e.field).sort()).toEqual(['exceptionCode', 'exceptionMessage', 'filingDate']);
  });

  it('allows a new exception while in exception, but not the same one again', () => {
    const inException = order('exception', { exceptionCode: '465', exceptionMessage: 'Name taken' });
    expect(planTransition(inException, { filingStatus: 'exception', exceptionCode: '466' }, TODAY).exceptionCode).toBe(
      '466',
    );
    expect(
      planTransition(
        inException,
        { filingStatus: 'exception', exceptionCode: '465', exceptionMessage: 'Also the alternative' },
        TODAY,
      ).exceptionMessage,
    ).toBe('Also the alternative');
    expect(
      outcome(() =>
        planTransition(
          inException,
          { filingStatus: 'exception', exceptionCode: '465', exceptionMessage: 'Name taken' },
          TODAY,
        ),
      ),
    ).toMatchObject({ status: 409, code: 'invalid_transition' });
  });

  it('clears the exception when the filing resumes', () => {
    const plan = planTransition(order('exception', { exceptionCode: '465' }), { filingStatus: 'pending' }, TODAY);
    expect(plan).toMatchObject({ to: 'pending', exceptionCode: null, exceptionReason: null, exceptionMessage: null });
  });

  it('dates a filing today unless told, and refuses impossible or future dates', () => {
    expect(planTransition(order('pending'), { filingStatus: 'filed' }, TODAY).filingDate).toBe(TODAY);
    expect(
      planTransition(order('pending'), { filingStatus: 'filed', filingDate: '2025-06-01' }, TODAY).filingDate,
    ).toBe('2025-06-01');
    expect(() => planTransition(order('pending'), { filingStatus: 'filed', filingDate: '2025-02-30' }, TODAY)).toThrow(
      /filingDate/,
    );
    expect(() => planTransition(order('pending'), { filingStatus: 'filed', filingDate: '2025-06-16' }, TODAY)).toThrow(
      /future/,
    );
  });

  it('needs the EIN to file a live EIN order, makes a fake one in test, and refuses it elsewhere', () => {
    const live = order('pending', { orderType: 'ein', environment: 'live' });
    expect(() => planTransition(live, { filingStatus: 'filed' }, TODAY)).toThrow(/ein: is required/);
    expect(planTransition(live, { filingStatus: 'filed', ein: '12-3456789' }, TODAY).ein).toBe('12-3456789');
    expect(() => planTransition(live, { filingStatus: 'filed', ein: '123456789' }, TODAY)).toThrow(/ein/);
    // Prefix 00 is the test EINs' own, assigned to no IRS campus: refused in live, accepted in test.
    expect(() => planTransition(live, { filingStatus: 'filed', ein: '00-1234567' }, TODAY)).toThrow(
      /cannot start with 00/,
    );
    expect(
      planTransition(order('pending', { orderType: 'ein' }), { filingStatus: 'filed', ein: '00-1234567' }, TODAY).ein,
    ).toBe('00-1234567');
    const test = planTransition(order('pending', { orderType: 'ein' }), { filingStatus: 'filed' }, TODAY);
    expect(test.ein).toMatch(/^00-\d{7}$/);
    expect(() => planTransition(order('pending'), { filingStatus: 'filed', ein: '12-3456789' }, TODAY)).toThrow(
      /only to EIN orders/,
    );
    expect(() => planTransition(live, { filingStatus: 'cancelled', ein: '12-3456789' }, TODAY)).toThrow(/ein/);
    expect(planTransition(live, { filingStatus: 'cancelled' }, TODAY).ein).toBeNull();
  });

  it('refuses an unknown status with 400', () => {
    expect(outcome(() => planTransition(order('submitted'), { filingStatus: 'approved' }, TODAY))).toMatchObject({
      status: 400,
      code: 'validation_error',
    });
  });
});

function catchValidation(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ValidationError) return err;
    throw err;
  }
  throw new Error('expected a ValidationError');
}

describe('expectedStatus (what the operator saw on the confirmation page)', () => {
  it('refuses with 409 when the order moved since it was shown', () => {
    const result = outcome(() =>
      planTransition(order('submitted'), { filingStatus: 'pending', expectedStatus: 'exception' }, TODAY),
    );
    expect(result).toMatchObject({ ok: false, status: 409, code: 'invalid_transition' });
    expect((result as { message: string }).message).toContain('now submitted, not exception');
  });

  it('lets the transition through when the order is as it was shown', () => {
    expect(planTransition(order('exception'), { filingStatus: 'pending', expectedStatus: 'exception' }, TODAY).to).toBe(
      'pending',
    );
  });
});

describe('orderStateOf', () => {
  const row = {
    id: 'order_row',
    order_type: 'ein',
    environment: 'live' as const,
    filing_status: 'exception',
    exception_code: '462',
    exception_message: 'name conflict',
  };

  it('reads the columns the state machine decides on', () => {
    expect(orderStateOf(row)).toEqual({
      id: 'order_row',
      orderType: 'ein',
      environment: 'live',
      filingStatus: 'exception',
      exceptionCode: '462',
      exceptionMessage: 'name conflict',
    });
  });

  it('refuses a row whose status is not a filing status as an internal error, naming the order', () => {
    const read = () => orderStateOf({ ...row, filing_status: 'archived' });
    expect(read).toThrow(AppError);
    expect(read).toThrow(/order_row/);
    try {
      read();
    } catch (err) {
      expect((err as AppError).status).toBe(500);
    }
  });
});
