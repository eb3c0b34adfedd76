import { Type } from '@sinclair/typebox';
import { DateTime, ListOf, Nullable, PageQuery } from '../../lib/schemas.js';
import { DOCUMENT_TYPE_PATTERN, DOCUMENT_TYPES, DOCUMENT_TYPE_VALUES } from './document-types.js';
import { FILE_URL_TTL_SECONDS } from './file-urls.js';

const typeList = Object.entries(DOCUMENT_TYPES)
  .map(([k, v]) => `- \`${k}\`: ${v}`)
  .join('\n');

/** A documentType in requests and filters: DOCUMENT_TYPE_PATTERN, the known values listed in its description. */
const DocumentTypeSchema = Type.String({
  pattern: DOCUMENT_TYPE_PATTERN,
  description: `Kind of document: a lowercase identifier (letters, digits, \`_\`, \`.\`, \`-\`; at most 64 characters). The list is open; the values this service produces are below, and another well-formed value is stored as given:\n${typeList}`,
});

/** The Document response (DOC-1) plus orderId and companyId; `fileUrl` is signed, valid FILE_URL_TTL_SECONDS. */
export const DocumentSchema = Type.Object(
  {
    documentId: Type.String({ description: 'prefix doc_' }),
    documentType: Type.String({
      description: `For example ${DOCUMENT_TYPE_VALUES.join(', ')} (see documentType of the upload).`,
    }),
    fileName: Type.String(),
    fileType: Type.String({
      description: 'Content type of the file: application/pdf, image/png, image/jpeg or image/tiff.',
    }),
    fileUrl: Type.String({
      format: 'uri',
      description: `Signed link to the file, served by this service; it works without an API key and expires ${FILE_URL_TTL_SECONDS / 60} minutes after this response (the link inside a document.uploaded event lasts 7 days). Fetch the document again for a fresh link.`,
    }),
    createdAt: DateTime,
    orderId: Nullable(
      Type.String({ description: 'The order the document came from; null for mail received for the company.' }),
    ),
    companyId: Type.String(),
  },
  { title: 'Document' },
);

/** Path `{documentId}` of GET /documents/{documentId}. */
export const DocumentParams = Type.Object({ documentId: Type.String({ minLength: 1 }) });

/** Query of GET /documents: cursor pagination plus optional companyId, orderId and documentType filters. */
export const ListDocumentsQuery = Type.Composite(
  [
    PageQuery,
    Type.Object({
      companyId: Type.Optional(Type.String({ minLength: 1, description: 'Only documents of this company.' })),
      orderId: Type.Optional(Type.String({ minLength: 1, description: 'Only documents of this order.' })),
      documentType: Type.Optional(DocumentTypeSchema),
    }),
  ],
  { additionalProperties: false },
);

/** A page of documents, newest first. */
export const DocumentList = ListOf(DocumentSchema);

/** Path `{orderId}` of the upload routes (admin, and the test helper; DOC-4). */
export const OrderParams = Type.Object({ orderId: Type.String({ minLength: 1 }) });

/** Body of POST /test_helpers/orders/{orderId}/documents: `{documentType}`; the service makes the PDF (DOC-4). */
export const SampleDocumentBody = Type.Object(
  { documentType: DocumentTypeSchema },
  { additionalProperties: false, title: 'SampleDocumentRequest' },
);

/** Path `{documentId}` of the signed file link (GET /files/{documentId}, DOC-5). */
export const FileParams = Type.Object({ documentId: Type.String({ minLength: 1 }) });
/** Query of the signed file link: `expires` in unix seconds, `signature` the hex HMAC-SHA256 made by signedFileUrl. */
export const FileQuery = Type.Object({
  expires: Type.Integer({ minimum: 0, description: 'Unix seconds after which the link is refused.' }),
  signature: Type.String({ pattern: '^[0-9a-fA-F]{64}$' }),
});
