import type { FastifyRequest } from 'fastify';
import type { Tenant } from '../../context.js';
import { field } from '../console/console.web.js';
import { requireRole } from './portal.web.js';
import type { PortalAction } from './roles.js';

/** Rows per page of the portal's logs (PORTAL-20, PORTAL-23, PORTAL-24). */
export const LOG_PAGE_SIZE = 50;

/**
 * The tenant a log page shows: the session's organization and environment (PORTAL-7), once the member's role there
 * may do `action` (PORTAL-2). @throws AppError forbidden.
 */
export function portalTenant(request: FastifyRequest, action: PortalAction): Tenant {
  const org = requireRole(request, action);
  return { organizationId: org.id, environment: request.portalSession!.environment };
}

/**
 * The filters typed into a log page's form, trimmed, and the problems found, by field name: each page shows a
 * problem next to its field and lists nothing until it is fixed.
 */
export class LogQuery {
  readonly values: Record<string, string> = {};
  readonly errors: Record<string, string> = {};

  constructor(private readonly query: unknown) {}

  /** The trimmed value of `name` ('' when absent), at most `max` characters. */
  text(name: string, max = 200): string {
    const value = field(this.query, name);
    this.values[name] = value;
    if (value.length > max) this.errors[name] = `must be at most ${max} characters`;
    return value;
  }

  /** An id of the given prefix (`wd`, `evt`, …), or undefined when empty. */
  id(name: string, prefix: string): string | undefined {
    const value = this.text(name, 100);
    if (!value) return undefined;
    if (!new RegExp(`^${prefix}_[0-9a-z]{26}$`).test(value)) this.errors[name] = `must be an id starting ${prefix}_`;
    return value;
  }

  /** One of `allowed`, or undefined when empty. */
  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const value = this.text(name);
    if (!value) return undefined;
    const found = allowed.find((a) => a === value);
    if (!found) this.errors[name] = `must be one of ${allowed.join(', ')}`;
    return found;
  }

  /** A moment typed as `YYYY-MM-DDTHH:MM` (a datetime-local field, read as UTC) or full ISO 8601; undefined when empty. */
  moment(name: string): Date | undefined {
    const value = this.text(name, 40);
    if (!value) return undefined;
    const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(value) ? `${value}Z` : value;
    const at = new Date(iso);
    if (Number.isNaN(at.getTime()) || !/^\d{4}-\d{2}-\d{2}T/.test(value)) {
      this.errors[name] = 'must be a date and time such as 2026-01-31T14:30 (UTC)';
      return undefined;
    }
    return at;
  }

  /**
   * The moments `from` and `to` of a range; a `to` before its `from` is refused at `to`, as the other pages' date
   * ranges are (list-filters.ts `dateRange`).
   */
  momentRange(): { from?: Date; to?: Date } {
    const from = this.moment('from');
    const to = this.moment('to');
    if (from && to && to < from) {
      this.errors.to = 'must not be before the start';
      return { from };
    }
    return { from, to };
  }

  /** Whether any field was refused. */
  get failed(): boolean {
    return Object.keys(this.errors).length > 0;
  }
}
