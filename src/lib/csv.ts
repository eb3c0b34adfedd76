/**
 * A text cell of a CSV export (RFC 4180): quoted when it holds a quote, comma or line break, and prefixed with an
 * apostrophe when a spreadsheet would run it as a formula (=, +, -, @, tab or CR first). null is an empty cell.
 */
export function csvText(v: string | null): string {
  const s = v ?? '';
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}
