/**
 * The complete list of documentType values (DOC-2; the public API shows only `company` and `registered_agent`
 * and leaves the list open). Each value says which filing or event
 * produces it, so integrators can route documents without reading them.
 */
export const DOCUMENT_TYPES = {
  articles_of_organization: 'Filed articles of organization of an LLC (formation order, once filed).',
  articles_of_incorporation:
    'Filed articles (certificate) of incorporation of a corporation (formation order, once filed).',
  ein_confirmation: 'The IRS EIN assignment notice, CP 575 (EIN order, once filed).',
  annual_report_confirmation: 'Filed annual report, as accepted by the state (annual report order).',
  foreign_qualification_certificate:
    'Certificate of authority or registration from the qualifying state (foreign qualification order).',
  change_of_agent_confirmation:
    'State confirmation of a change of registered agent (registered agent order with isChangeOfAgent).',
  certificate_of_good_standing: 'Certificate of good standing (existence) issued by the state.',
  dba_certificate: 'Filed DBA (assumed or trade name) registration.',
  registered_agent:
    'State and legal mail received by the registered agent for the company (service of process, state notices).',
  company: 'Any other document about the company (operating agreement, bylaws, amendments, correspondence).',
} as const;

/** A documentType this service produces and documents (a key of DOCUMENT_TYPES). */
export type KnownDocumentType = keyof typeof DOCUMENT_TYPES;

/** Any documentType accepted: a known value or another well-formed one (DOCUMENT_TYPE_PATTERN). */
export type DocumentType = string;

/** The known documentType values, in DOCUMENT_TYPES order. */
export const DOCUMENT_TYPE_VALUES = Object.keys(DOCUMENT_TYPES) as KnownDocumentType[];

/**
 * Shape of an accepted documentType (DOC-2). The public API leaves the list open (it shows only company and
 * registered_agent), so a caller's own well-formed type (e.g. `articles`) is stored as given rather
 * than refused; the known values above are the ones this service produces and documents.
 */
export const DOCUMENT_TYPE_PATTERN = '^[a-z0-9][a-z0-9_.-]{0,63}$';
const DOCUMENT_TYPE_RE = new RegExp(DOCUMENT_TYPE_PATTERN);

/** True for a lowercase identifier of at most 64 characters (letters, digits, `_`, `.`, `-`). */
export function isDocumentType(value: string): value is DocumentType {
  return DOCUMENT_TYPE_RE.test(value);
}

/** A human title for a document type, e.g. `Articles of Organization` (used on generated test PDFs). */
export function documentTitle(type: DocumentType): string {
  if (type === 'ein_confirmation') return 'EIN Confirmation (CP 575)';
  if (type === 'registered_agent') return 'Registered Agent Mail';
  if (type === 'company') return 'Company Document';
  if (type === 'dba_certificate') return 'DBA Certificate';
  return type
    .split(/[_.-]+/)
    .filter(Boolean)
    .map((w) => (w === 'of' ? w : w[0].toUpperCase() + w.slice(1)))
    .join(' ');
}
