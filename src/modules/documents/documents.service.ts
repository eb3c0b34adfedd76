import type { AppContext, Tenant } from '../../context.js';
import { withTransaction, type Db } from '../../lib/db.js';
import { withFields } from '../../lib/objects.js';
import { AppError, FieldErrors, notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { toPage, type Page } from '../../lib/pagination.js';
import { emitEvent, type EventEnvelope } from '../events/events.service.js';
import { documentTitle, DOCUMENT_TYPE_VALUES, isDocumentType, type DocumentType } from './document-types.js';
import * as repo from './documents.repo.js';
import {
  acceptedFileType,
  ALLOWED_FILE_TYPES,
  removeStoredFile,
  storageKeyFor,
  writeStoredFile,
} from './file-storage.js';
import { EVENT_FILE_URL_TTL_SECONDS, signedFileUrl } from './file-urls.js';
import { makeSamplePdf } from './sample-pdf.js';
import { queueDocumentEmail } from '../notifications/notifications.service.js';

/** The Document resource (DOC-1). `fileUrl` is a signed link (file-urls.ts); createdAt ISO 8601. */
export interface DocumentView {
  documentId: string;
  documentType: string;
  fileName: string;
  fileType: string;
  fileUrl: string;
  createdAt: string;
  orderId: string | null;
  companyId: string;
}

/**
 * A document to store. Give `orderId` (the company is the order's) or `companyId` (mail for the company
 * without an order, e.g. registered-agent mail), or both when they agree. `fileType` is the caller's claim;
 * the stored type is what the bytes are (PDF, PNG, JPEG or TIFF), or the claim when the bytes carry no known
 * signature (see acceptedFileType).
 */
export interface StoreDocumentInput {
  orderId?: string | null;
  companyId?: string | null;
  documentType: string;
  fileName: string;
  fileType?: string;
  bytes: Uint8Array;
}

/** Largest document accepted, in bytes (25 MB). */
export const MAX_DOCUMENT_BYTES = 25 * 1024 * 1024;

/**
 * Stores a document: the file under STORAGE_DIR, then ONE transaction with the documents row and the
 * `document.uploaded` event (data: orderId, companyId, documentId, documentType, fileName, fileType,
 * fileUrl, createdAt; EVT-4, DOC-4). If the transaction fails the file is removed again.
 * @param tenant the caller's tenant, or null for operators (the tenant is the order's or company's).
 * @param actor `operator`, `operator:<id>`, `cli`, `test_helper`.
 * @throws ValidationError (400) for a bad documentType/fileName/empty file or an order of another company;
 *   AppError not_found (404) for an unknown order/company; unsupported_media_type (415) for bytes that are
 *   not PDF/PNG/JPEG/TIFF; payload_too_large (413) above MAX_DOCUMENT_BYTES.
 */
export async function storeDocument(
  ctx: AppContext,
  tenant: Tenant | null,
  input: StoreDocumentInput,
  actor: string,
): Promise<{ document: DocumentView; event: EventEnvelope }> {
  const fileType = checkInput(input);
  const owner = await findOwner(ctx.pool, tenant, input);
  const ownerTenant: Tenant = { organizationId: owner.organization_id, environment: owner.environment };
  const id = newId('document');
  const storageKey = storageKeyFor(ownerTenant.environment, id);
  await writeStoredFile(ctx.config, storageKey, input.bytes);
  try {
    return await withTransaction(ctx.pool, async (tx) => {
      const row = await repo.insertDocument(tx, {
        id,
        tenant: ownerTenant,
        orderId: owner.order_id,
        companyId: owner.company_id,
        documentType: input.documentType,
        fileName: cleanFileName(input.fileName, input.documentType, fileType),
        fileType,
        storageKey,
        sizeBytes: input.bytes.length,
        uploadedBy: actor,
      });
      const eventView = serializeDocument(ctx, row, EVENT_FILE_URL_TTL_SECONDS);
      const event = await emitEvent(tx, ownerTenant, 'document.uploaded', { ...eventView });
      // Company admins are emailed by a background job queued in this transaction (DOC-6).
      await queueDocumentEmail(tx, ownerTenant, row.id);
      return { document: serializeDocument(ctx, row), event };
    });
  } catch (err) {
    await removeStoredFile(ctx.config, storageKey).catch(() => undefined);
    throw err;
  }
}

/**
 * Test environment (DOC-4, TEN-4): makes a small real PDF (title, company legal name, order id, date)
 * and stores it as a document of the order, emitting `document.uploaded`.
 * @throws as storeDocument; not_found for an order outside the tenant.
 */
export async function storeSampleDocument(
  ctx: AppContext,
  tenant: Tenant,
  orderId: string,
  documentType: DocumentType,
  actor: string,
) {
  const owner = await repo.findOrderOwner(ctx.pool, tenant, orderId);
  if (!owner) throw notFound('order', orderId);
  const bytes = await makeSamplePdf({
    title: documentTitle(documentType),
    companyName: owner.legal_name,
    orderId,
    date: new Date().toISOString().slice(0, 10),
  });
  return storeDocument(
    ctx,
    tenant,
    { orderId, documentType, fileName: `${documentType}.pdf`, fileType: 'application/pdf', bytes },
    actor,
  );
}

/** GET /documents/{documentId}: the tenant's document with a fresh one-hour link. @throws not_found. */
export async function getDocument(ctx: AppContext, tenant: Tenant | null, documentId: string): Promise<DocumentView> {
  const row = await repo.findDocument(ctx.pool, tenant, documentId);
  if (!row) throw notFound('document', documentId);
  return serializeDocument(ctx, row);
}

/** GET /documents: the tenant's documents, newest first, each with a fresh one-hour link. */
export async function listDocuments(
  ctx: AppContext,
  tenant: Tenant,
  filter: Omit<repo.DocumentFilter, 'limit'> & { limit?: number },
): Promise<Page<DocumentView>> {
  const limit = filter.limit ?? 20;
  const rows = await repo.listDocuments(ctx.pool, tenant, withFields(filter, { limit }));
  return toPage(rows, limit, (r) => serializeDocument(ctx, r));
}

/**
 * The document a verified file link names (any tenant: the signature already proved the link is ours), with its
 * storage key; null when it no longer exists.
 */
export function findLinkedDocument(db: Db, documentId: string): Promise<repo.DocumentRow | null> {
  return repo.findDocument(db, null, documentId);
}

/** The API shape of a document row; `ttlSeconds` is the link lifetime (default one hour). */
export function serializeDocument(ctx: AppContext, row: repo.DocumentRow, ttlSeconds?: number): DocumentView {
  return {
    documentId: row.id,
    documentType: row.document_type,
    fileName: row.file_name,
    fileType: row.file_type,
    fileUrl: signedFileUrl(ctx, row.id, { ttlSeconds }),
    createdAt: row.created_at.toISOString(),
    orderId: row.order_id,
    companyId: row.company_id,
  };
}

// Validates what does not need the database; returns the file type the bytes really have.
function checkInput(input: StoreDocumentInput): string {
  const errors = new FieldErrors();
  if (!isDocumentType(input.documentType))
    errors.add(
      'documentType',
      `must be a lowercase identifier of at most 64 characters, such as ${DOCUMENT_TYPE_VALUES.join(', ')}`,
    );
  if (!input.orderId && !input.companyId) errors.add('orderId', 'an order or a company is required');
  if (!input.bytes.length) errors.add('file', 'is empty');
  errors.throwIfAny();
  if (input.bytes.length > MAX_DOCUMENT_BYTES)
    throw new AppError('payload_too_large', `Documents are limited to ${MAX_DOCUMENT_BYTES / 1024 / 1024} MB`);
  const fileType = acceptedFileType(input.bytes, input.fileType, input.fileName);
  if (!fileType)
    throw new AppError(
      'unsupported_media_type',
      `The file is not one of the accepted types: ${ALLOWED_FILE_TYPES.join(', ')}`,
    );
  return fileType;
}

async function findOwner(db: Db, tenant: Tenant | null, input: StoreDocumentInput): Promise<repo.DocumentOwner> {
  if (input.orderId) {
    const owner = await repo.findOrderOwner(db, tenant, input.orderId);
    if (!owner) throw notFound('order', input.orderId);
    if (input.companyId && input.companyId !== owner.company_id) {
      new FieldErrors()
        .add('companyId', `order ${input.orderId} belongs to company ${owner.company_id}, not ${input.companyId}`)
        .throwIfAny();
    }
    return owner;
  }
  const owner = await repo.findCompanyOwner(db, tenant, input.companyId!);
  if (!owner) throw notFound('company', input.companyId!);
  return owner;
}

const EXTENSIONS: Record<string, string> = {
  'application/pdf': 'pdf',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/tiff': 'tiff',
};

// The name shown to integrators: the base name only, without control characters or quotes, at most 200 chars.
function cleanFileName(name: string, documentType: string, fileType: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const cleaned = base
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this strips from file names.
    .replace(/[\u0000-\u001f\u007f"<>|:*?]/g, '')
    .trim()
    .slice(-200);
  return cleaned && cleaned !== '.' && cleaned !== '..' ? cleaned : `${documentType}.${EXTENSIONS[fileType]}`;
}
