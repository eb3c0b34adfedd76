import { centsToDecimalString, dollarsToCents, formatCents, formatDollars } from '../../lib/money.js';

const ACRONYMS: Record<string, string> = { ein: 'EIN', dba: 'DBA' };

/** Formatting helpers handed to every console template as `it.h`. */
export const viewHelpers = {
  money(cents: number | null | undefined): string {
    return cents == null ? '—' : formatCents(Number(cents));
  },
  /** A dollar amount as the services answer it (API shape), e.g. 1500 -> '$1,500.00'; null -> '—'. */
  dollars(dollars: number | null | undefined): string {
    return formatDollars(dollars ?? null);
  },
  /** A dollar amount as a form field's value: 1500 -> '1500.00'; null -> ''. */
  dollarsField(dollars: number | null | undefined): string {
    return dollars == null ? '' : centsToDecimalString(dollarsToCents(dollars));
  },
  /** '2025-03-04 17:05 UTC' */
  time(value: Date | string | null | undefined): string {
    if (!value) return '—';
    const d = value instanceof Date ? value : new Date(value);
    return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  },
  iso(value: Date | string | null | undefined): string {
    if (!value) return '';
    return (value instanceof Date ? value : new Date(value)).toISOString();
  },
  /** Age since `value`, e.g. '3d 4h', '2h 10m', '45s'. */
  age(value: Date | string, now: Date = new Date()): string {
    const seconds = Math.max(0, Math.floor((now.getTime() - new Date(value).getTime()) / 1000));
    const d = Math.floor(seconds / 86400);
    const h = Math.floor((seconds % 86400) / 3600);
    const m = Math.floor((seconds % 3600) / 60);
    if (d) return `${d}d ${h}h`;
    if (h) return `${h}h ${m}m`;
    if (m) return `${m}m`;
    return `${seconds}s`;
  },
  /** Hours since `value`, for highlighting old queue items. */
  hoursSince(value: Date | string): number {
    return (Date.now() - new Date(value).getTime()) / 3_600_000;
  },
  /**
   * A name to show, link or head a row with: the name, or "(no name)" when it is blank (the API takes any name of at
   * least one character, spaces alone included), so that no link, heading or header cell is left without text.
   */
  name(value: string | null | undefined): string {
    return value?.trim() ? value : '(no name)';
  },
  /** An address as the API gives it, on one line: '251 Little Falls Drive, Wilmington, DE 19808, US'; none: '—'. */
  address(
    a:
      | {
          line1?: string;
          line2?: string | null;
          city?: string;
          state?: string | null;
          postalCode?: string | null;
          country?: string;
        }
      | null
      | undefined,
  ): string {
    if (!a) return '—';
    const region = [a.state, a.postalCode].filter(Boolean).join(' ');
    return [a.line1, a.line2, a.city, region, a.country].filter(Boolean).join(', ') || '—';
  },
  /** 'registered_agent' -> 'Registered agent'. */
  label(value: string | null | undefined): string {
    if (!value) return '—';
    if (ACRONYMS[value]) return ACRONYMS[value];
    const words = value
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .replace(/_/g, ' ')
      .toLowerCase();
    return words.charAt(0).toUpperCase() + words.slice(1);
  },
  json(value: unknown): string {
    return JSON.stringify(value, null, 2);
  },
  /** A query string from params, dropping empty values (for filter and pagination links). */
  qs(params: Record<string, string | number | undefined | null>): string {
    const entries = Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== '');
    return entries.length ? `?${new URLSearchParams(entries.map(([k, v]) => [k, String(v)])).toString()}` : '';
  },
  /** A status code's tone for badges: ok (2xx), warn (none yet), bad (anything else). */
  codeTone(code: number | null | undefined): string {
    if (code == null) return 'bad';
    return code >= 200 && code < 300 ? 'ok' : 'bad';
  },
};
