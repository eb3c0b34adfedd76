import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

/**
 * A text cell of a CSV export (RFC 4180): quoted when it holds a quote, comma or line break, and prefixed with an
 * apostrophe when a spreadsheet would run it as a formula (=, +, -, @, tab or CR first). null is an empty cell.
 */
export function csvText(v: string | null): string {
  const s = v ?? '';
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/**
 * Answers a CSV download: `lines` (the header first, each line ending in CRLF) streamed as they are read, as an
 * attachment named `filename`, never cached.
 */
export function sendCsv(reply: FastifyReply, filename: string, lines: AsyncIterable<string>): FastifyReply {
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename}"`)
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .send(Readable.from(lines));
}
