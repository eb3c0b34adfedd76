import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { AppError, ValidationError } from '../../lib/errors.js';
import { redirectWith } from './console.web.js';

/** Whole or cent dollar amount typed in a form, e.g. "1500" or "1,500.00", as a number of dollars. @throws ValidationError. */
export function parseDollars(raw: string, name: string): number {
  const cleaned = raw.replace(/[$,\s]/g, '');
  if (!/^\d+(\.\d{1,2})?$/.test(cleaned))
    throw new ValidationError([{ field: name, message: 'must be an amount in dollars, e.g. 1500 or 1500.00' }]);
  return Number(cleaned);
}

/**
 * Runs a business form's action and redirects back with its message, or with the refusal (4xx AppError)
 * as an error message. 5xx errors go to the error page.
 */
export async function formAction(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  back: string,
  action: () => Promise<string>,
): Promise<FastifyReply> {
  try {
    return redirectWith(ctx, request, reply, back, { kind: 'ok', text: await action() });
  } catch (err) {
    if (err instanceof AppError && err.status < 500)
      return redirectWith(ctx, request, reply, back, { kind: 'error', text: err.message });
    if (err instanceof RangeError) return redirectWith(ctx, request, reply, back, { kind: 'error', text: err.message });
    throw err;
  }
}
