import type { Environment, Tenant } from '../../context.js';
import { many, one, onePrepared, type Db } from '../../lib/db.js';

/** A documents row. */
export interface DocumentRow {
  id: string;
  organization_id: string;
  environment: Environment;
  order_id: string | null;
  company_id: string;
  document_type: string;
  file_name: string;
  file_type: string;
  storage_key: string;
  size_bytes: number;
  uploaded_by: string;
  created_at: Date;
}

/** What a new document row holds. */
export interface NewDocumentRow {
  id: string;
  tenant: Tenant;
  orderId: string | null;
  companyId: string;
  documentType: string;
  fileName: string;
  fileType: string;
  storageKey: string;
  sizeBytes: number;
  uploadedBy: string;
}

/** Inserts a document row for `d.tenant` and returns it. */
export async function insertDocument(tx: Db, d: NewDocumentRow): Promise<DocumentRow> {
  const row = await one<DocumentRow>(
    tx,
    `INSERT INTO documents (id, organization_id, environment, order_id, company_id, document_type, file_name, file_type, storage_key, size_bytes, uploaded_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
    [
      d.id,
      d.tenant.organizationId,
      d.tenant.environment,
      d.orderId,
      d.companyId,
      d.documentType,
      d.fileName,
      d.fileType,
      d.storageKey,
      d.sizeBytes,
      d.uploadedBy,
    ],
  );
  return row!;
}

/** A document of the tenant (null tenant: any; used by the file route after the link was verified). */
export function findDocument(db: Db, tenant: Tenant | null, id: string): Promise<DocumentRow | null> {
  // The tenant's read is a hot one (GET /documents/{id}): prepared once per connection, columns named (see users.repo).
  return tenant
    ? onePrepared<DocumentRow>(
        db,
        'document_by_id',
        `SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE id = $1 AND organization_id = $2 AND environment = $3`,
        [id, tenant.organizationId, tenant.environment],
      )
    : one<DocumentRow>(db, 'SELECT * FROM documents WHERE id = $1', [id]);
}

const DOCUMENT_COLUMNS =
  'id, organization_id, environment, order_id, company_id, document_type, file_name, file_type, storage_key, size_bytes, uploaded_by, created_at';

/** Filters of GET /documents. */
export interface DocumentFilter {
  companyId?: string;
  orderId?: string;
  documentType?: string;
  startingAfter?: string;
  limit: number;
}

/** The tenant's documents, newest first; fetches limit + 1 rows (see toPage). */
export function listDocuments(db: Db, tenant: Tenant, f: DocumentFilter): Promise<DocumentRow[]> {
  const params: unknown[] = [tenant.organizationId, tenant.environment];
  const where = ['organization_id = $1', 'environment = $2'];
  const add = (col: string, op: string, value: unknown) => {
    params.push(value);
    where.push(`${col} ${op} $${params.length}`);
  };
  if (f.companyId) add('company_id', '=', f.companyId);
  if (f.orderId) add('order_id', '=', f.orderId);
  if (f.documentType) add('document_type', '=', f.documentType);
  if (f.startingAfter) add('id', '<', f.startingAfter);
  params.push(f.limit + 1);
  return many<DocumentRow>(
    db,
    `SELECT * FROM documents WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT $${params.length}`,
    params,
  );
}

/** The order or company a document is attached to, with its tenant; null when not found for the tenant. */
export interface DocumentOwner {
  organization_id: string;
  environment: Environment;
  company_id: string;
  legal_name: string;
  order_id: string | null;
}

/** The owner of order `orderId` (its company; null tenant: any tenant), or null when not found. */
export function findOrderOwner(db: Db, tenant: Tenant | null, orderId: string): Promise<DocumentOwner | null> {
  return one<DocumentOwner>(
    db,
    `SELECT o.organization_id, o.environment, o.company_id, c.legal_name, o.id AS order_id
       FROM orders o JOIN companies c ON c.id = o.company_id
      WHERE o.id = $1 ${tenant ? 'AND o.organization_id = $2 AND o.environment = $3' : ''}`,
    tenant ? [orderId, tenant.organizationId, tenant.environment] : [orderId],
  );
}

/** The owner of company `companyId` (null tenant: any tenant), or null when not found; `order_id` is null. */
export function findCompanyOwner(db: Db, tenant: Tenant | null, companyId: string): Promise<DocumentOwner | null> {
  return one<DocumentOwner>(
    db,
    `SELECT organization_id, environment, id AS company_id, legal_name, NULL AS order_id
       FROM companies WHERE id = $1 ${tenant ? 'AND organization_id = $2 AND environment = $3' : ''}`,
    tenant ? [companyId, tenant.organizationId, tenant.environment] : [companyId],
  );
}

/** A stored file as the documents table knows it: key, content type and size in bytes (DOC-9). */
export interface StoredFileRow {
  id: string;
  storage_key: string;
  file_type: string;
  size_bytes: number;
}

/** DOC-9: up to `limit` documents' files of every tenant after `afterId`, in id order (keyset paging). */
export async function listStoredFiles(db: Db, afterId: string, limit: number): Promise<StoredFileRow[]> {
  const rows = await many<StoredFileRow>(
    db,
    'SELECT id, storage_key, file_type, size_bytes FROM documents WHERE id > $1 ORDER BY id LIMIT $2',
    [afterId, limit],
  );
  return rows.map((r) => ({ ...r, size_bytes: Number(r.size_bytes) }));
}
