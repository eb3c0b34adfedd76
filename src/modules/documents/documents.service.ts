import { Readable, Transform } from 'node:stream';
import type { AppContext, Tenant } from '../../context.js';
import { withTransaction, type Db } from '../../lib/db.js';
import { withFields } from '../../lib/objects.js';
import { AppError, FieldErrors, notFound } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { toPage, type Page } from '../../lib/pagination.js';
import { emitEvent, type EventEnvelope } from '../events/events.service.js';
import { documentTitle, DOCUMENT_TYPE_VALUES, isDocumentType, type DocumentType } from './document-types.js';
import * as repo from './documents.repo.js';
import { documentStore } from './document-store.js';
import { acceptedFileType, ALLOWED_FILE_TYPES, peekStream, storageKeyFor } from './file-storage.js';
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
export interface StoreDocumentInput extends DocumentOwnerRef, DocumentFileInput {
  documentType: string;
}

/** The order or company a document is for (at least one; both must agree). */
export interface DocumentOwnerRef {
  orderId?: string | null;
  companyId?: string | null;
}

/**
 * The file of a document: its bytes as a stream (uploads, the CLI: never read whole into memory, DOC-8) or, for files
 * the service makes itself, a buffer; the caller's file name and claimed content type.
 */
export interface DocumentFileInput {
  content: Readable | Uint8Array;
  fileName: string;
  fileType?: string;
}

/** A document file written to the store whose row is not written yet (stageDocumentFile, recordDocument). */
export interface StagedDocumentFile {
  documentId: string;
  owner: repo.DocumentOwner;
  storageKey: string;
  fileName: string;
  fileType: string;
  sizeBytes: number;
}

/** Largest document accepted, in bytes (25 MB). */
export const MAX_DOCUMENT_BYTES = 25 * 1024 * 1024;

/** Bytes read ahead of storing a file to tell its type (DOC-3): markup is looked for in the first 512. */
const HEAD_BYTES = 512;

/**
 * Stores a document: the file in the document store (DOC-7), then ONE transaction with the documents row and the
 * `document.uploaded` event (data: orderId, companyId, documentId, documentType, fileName, fileType,
 * fileUrl, createdAt; EVT-4, DOC-4). If the transaction fails the file is removed again (DOC-8).
 * @param tenant the caller's tenant, or null for operators (the tenant is the order's or company's).
 * @param actor `operator`, `operator:<id>`, `cli`, `test_helper`.
 * @throws ValidationError (400) for a bad documentType/fileName/empty file or an order of another company;
 *   AppError not_found (404) for an unknown order/company; unsupported_media_type (415) for bytes that are
 *   not PDF/PNG/JPEG/TIFF; payload_too_large (413) above MAX_DOCUMENT_BYTES; service_unavailable (503) when the
 *   store refuses the file.
 */
export async function storeDocument(
  ctx: AppContext,
  tenant: Tenant | null,
  input: StoreDocumentInput,
  actor: string,
): Promise<{ document: DocumentView; event: EventEnvelope }> {
  const errors = documentTypeErrors(input.documentType);
  if (!input.orderId && !input.companyId) errors.add('orderId', 'an order or a company is required');
  if (errors.list.length) {
    discard(input.content);
    errors.throwIfAny();
  }
  const staged = await stageDocumentFile(ctx, tenant, input, input);
  return recordDocument(ctx, staged, input.documentType, actor);
}

/**
 * DOC-8: the first half of storing a document, for a form whose fields may come after its file: finds the owner,
 * reads the file's type from its first bytes (DOC-3) and streams the file into the store, counting its bytes. Nothing
 * is left in the store when this throws; a file it staged is removed by recordDocument when that fails, or by
 * discardStagedFile.
 * @throws as storeDocument (not_found, validation_error for an empty file or no owner, 415, 413, 503).
 */
export async function stageDocumentFile(
  ctx: AppContext,
  tenant: Tenant | null,
  ref: DocumentOwnerRef,
  file: DocumentFileInput,
): Promise<StagedDocumentFile> {
  // What is left to read of the file until the store takes it over; dropped when refused before that.
  let rest: Readable | Uint8Array | null = file.content;
  try {
    if (!ref.orderId && !ref.companyId)
      new FieldErrors().add('orderId', 'an order or a company is required').throwIfAny();
    const owner = await findOwner(ctx.pool, tenant, ref);
    const { head, stream } = await peekStream(toStream(file.content), HEAD_BYTES);
    rest = stream;
    if (!head.length) new FieldErrors().add('file', 'is empty').throwIfAny();
    const fileType = acceptedFileType(head, file.fileType, file.fileName);
    if (!fileType)
      throw new AppError(
        'unsupported_media_type',
        `The file is not one of the accepted types: ${ALLOWED_FILE_TYPES.join(', ')}`,
      );
    const documentId = newId('document');
    const storageKey = storageKeyFor(owner.environment, documentId);
    const counter = byteCounter(MAX_DOCUMENT_BYTES);
    rest = null;
    await writeToStore(ctx, storageKey, stream.pipe(counter.stream), fileType, stream);
    return { documentId, owner, storageKey, fileName: file.fileName, fileType, sizeBytes: counter.bytes() };
  } catch (err) {
    if (rest) discard(rest);
    throw err;
  }
}

/**
 * DOC-8: the second half: ONE transaction with the documents row, the `document.uploaded` event and the document
 * emails, as storeDocument describes. Removes the staged file when `documentType` is refused or the transaction fails.
 * @throws validation_error (400) for a bad documentType; the transaction's error.
 */
export async function recordDocument(
  ctx: AppContext,
  staged: StagedDocumentFile,
  documentType: string,
  actor: string,
): Promise<{ document: DocumentView; event: EventEnvelope }> {
  const ownerTenant: Tenant = { organizationId: staged.owner.organization_id, environment: staged.owner.environment };
  try {
    documentTypeErrors(documentType).throwIfAny();
    return await withTransaction(ctx.pool, async (tx) => {
      const row = await repo.insertDocument(tx, {
        id: staged.documentId,
        tenant: ownerTenant,
        orderId: staged.owner.order_id,
        companyId: staged.owner.company_id,
        documentType,
        fileName: cleanFileName(staged.fileName, documentType, staged.fileType),
        fileType: staged.fileType,
        storageKey: staged.storageKey,
        sizeBytes: staged.sizeBytes,
        uploadedBy: actor,
      });
      const eventView = serializeDocument(ctx, row, EVENT_FILE_URL_TTL_SECONDS);
      const event = await emitEvent(tx, ownerTenant, 'document.uploaded', { ...eventView });
      // Company admins are emailed by a background job queued in this transaction (DOC-6).
      await queueDocumentEmail(tx, ownerTenant, row.id);
      return { document: serializeDocument(ctx, row), event };
    });
  } catch (err) {
    // The store is called only now, after the transaction has ended and given its connection back.
    await discardStagedFile(ctx, staged);
    throw err;
  }
}

/** Removes a staged file whose document will not be recorded (DOC-8); a failure to remove it is logged, not thrown. */
export async function discardStagedFile(ctx: AppContext, staged: StagedDocumentFile): Promise<void> {
  await documentStore(ctx.config)
    .remove(staged.storageKey)
    .catch((err) => ctx.log.warn({ err, storageKey: staged.storageKey }, 'could not remove a staged document file'));
}

// Writes to the store; a refusal of the store (not of the file) is a 503 the caller may retry.
async function writeToStore(
  ctx: AppContext,
  storageKey: string,
  content: Readable,
  fileType: string,
  source: Readable,
): Promise<void> {
  // An error of the source (client gone, body cut off, parser failure) reaches the store through the counter, and is
  // the caller's to answer: the store did nothing wrong.
  let sourceError: unknown = null;
  source.once('error', (err) => {
    sourceError = err;
    content.destroy(err);
  });
  try {
    await documentStore(ctx.config).write(storageKey, content, fileType);
  } catch (err) {
    await documentStore(ctx.config)
      .remove(storageKey)
      .catch(() => undefined);
    if (sourceError) throw sourceError;
    if (err instanceof AppError || (err as { statusCode?: number }).statusCode) throw err;
    ctx.log.error({ err, storageKey }, 'document store refused a file');
    throw new AppError('service_unavailable', 'The document could not be stored just now; try again');
  }
}

/** A pass-through that counts bytes and fails with payload_too_large (413), naming the field `file`, past `limit`. */
function byteCounter(limit: number): { stream: Transform; bytes: () => number } {
  let bytes = 0;
  const message = `file: must be at most ${limit / 1024 / 1024} MB, the largest document accepted`;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      if (bytes > limit) done(new AppError('payload_too_large', message));
      else done(null, chunk);
    },
  });
  return { stream, bytes: () => bytes };
}

function toStream(content: Readable | Uint8Array): Readable {
  return content instanceof Uint8Array ? Readable.from([Buffer.from(content)]) : content;
}

// Reads and drops what is left of a refused upload, so the request it came in can finish.
function discard(content: Readable | Uint8Array): void {
  if (content instanceof Uint8Array) return;
  content.on('error', () => undefined);
  content.resume();
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
    { orderId, documentType, fileName: `${documentType}.pdf`, fileType: 'application/pdf', content: bytes },
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

// DOC-2: the problems of a documentType, if any, to add to or throw.
function documentTypeErrors(documentType: string): FieldErrors {
  const errors = new FieldErrors();
  if (!isDocumentType(documentType))
    errors.add(
      'documentType',
      `must be a lowercase identifier of at most 64 characters, such as ${DOCUMENT_TYPE_VALUES.join(', ')}`,
    );
  return errors;
}

async function findOwner(db: Db, tenant: Tenant | null, input: DocumentOwnerRef): Promise<repo.DocumentOwner> {
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
