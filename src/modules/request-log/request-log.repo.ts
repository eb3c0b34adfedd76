import type { Tenant } from '../../context.js';
import { many, type Db } from '../../lib/db.js';

/** A failed_api_requests row with the redacted form of its key (`sk_test_…abcd`). */
export interface FailedRequestRow {
  id: string;
  api_key_id: string;
  api_key_redacted: string | null;
  method: string;
  path: string;
  status: number;
  request_id: string;
  error_body: string | null;
  created_at: Date;
}

/** One failed request as recorded (PORTAL-24): the tenant and key that made it, what was asked and answered. */
export interface FailedRequest {
  id: string;
  apiKeyId: string;
  method: string;
  path: string;
  status: number;
  requestId: string;
  errorBody: string | null;
}

/** Filters of the request log; every one optional. `pathPrefix` matches the start of the path. */
export interface FailedRequestFilters {
  status?: number;
  pathPrefix?: string;
  requestId?: string;
}

/** Writes one failed request of `tenant` (a single INSERT). */
export async function insertFailedRequest(db: Db, tenant: Tenant, r: FailedRequest): Promise<void> {
  await db.query(
    `INSERT INTO failed_api_requests (id, organization_id, environment, api_key_id, method, path, status, request_id, error_body)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [r.id, tenant.organizationId, tenant.environment, r.apiKeyId, r.method, r.path, r.status, r.requestId, r.errorBody],
  );
}

/**
 * A page of the tenant's failed requests of the last `days` days, newest first (`limit + 1` rows, ids below
 * `before` when given), through the tenant's id, status or request-id index.
 */
export function listFailedRequests(
  db: Db,
  tenant: Tenant,
  f: FailedRequestFilters,
  page: { limit: number; before?: string; notBefore: string },
): Promise<FailedRequestRow[]> {
  const params: unknown[] = [tenant.organizationId, tenant.environment, page.notBefore];
  const where = ['f.organization_id = $1', 'f.environment = $2', 'f.id >= $3'];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replaceAll('?', `$${params.length}`));
  };
  if (f.status !== undefined) add('f.status = ?', f.status);
  if (f.requestId) add('f.request_id = ?', f.requestId);
  // A prefix: LIKE's wildcards in what was typed are matched as themselves.
  if (f.pathPrefix)
    add(
      `f.path LIKE ? || '%'`,
      f.pathPrefix.replace(/[\\%_]/g, (c) => `\\${c}`),
    );
  if (page.before) add('f.id < ?', page.before);
  params.push(page.limit + 1);
  return many<FailedRequestRow>(
    db,
    `SELECT f.id, f.api_key_id, k.redacted AS api_key_redacted, f.method, f.path, f.status, f.request_id, f.error_body, f.created_at
       FROM failed_api_requests f LEFT JOIN api_keys k ON k.id = f.api_key_id
      WHERE ${where.join(' AND ')} ORDER BY f.id DESC LIMIT $${params.length}`,
    params,
  );
}
