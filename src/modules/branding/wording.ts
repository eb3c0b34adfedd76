/*
 * How the service speaks to end customers, on the dashboard and in emails alike: plain-word names of order and
 * document types, and dates as customers read them (DASH-2, DASH-4).
 */

/** Plain-word names of order types (DASH-2, DASH-4). */
export const ORDER_TYPE_LABELS: Record<string, string> = {
  formation: 'Company formation',
  ein: 'EIN (federal tax ID)',
  annual_report: 'Annual report',
  registered_agent: 'Registered agent service',
  foreign_qualification: 'Foreign qualification',
  certificate_of_good_standing: 'Certificate of good standing',
  dba: 'DBA (trade name)',
};

const DOCUMENT_TYPE_LABELS: Record<string, string> = {
  company: 'Company document',
  registered_agent: 'Registered agent mail',
};

const dateFormat = new Intl.DateTimeFormat('en-US', {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  timeZone: 'UTC',
});

/** 'Mar 4, 2025' for a Date or a 'YYYY-MM-DD' string; '' for null. */
export function formatDate(value: Date | string | null): string {
  if (!value) return '';
  return dateFormat.format(typeof value === 'string' ? new Date(`${value.slice(0, 10)}T00:00:00Z`) : value);
}

/** A document row with a readable type and size. */
export function presentDocument(d: {
  id: string;
  document_type: string;
  file_name: string;
  size_bytes: number;
  created_at: Date;
}) {
  return {
    id: d.id,
    type:
      DOCUMENT_TYPE_LABELS[d.document_type] ??
      d.document_type.replace(/_/g, ' ').replace(/^./, (ch) => ch.toUpperCase()),
    fileName: d.file_name,
    size:
      d.size_bytes >= 1024 * 1024
        ? `${(d.size_bytes / 1024 / 1024).toFixed(1)} MB`
        : `${Math.max(1, Math.round(d.size_bytes / 1024))} KB`,
    addedOn: formatDate(d.created_at),
  };
}
