import type { Tenant } from '../../context.js';
import { many, one, type Db } from '../../lib/db.js';

/** The admins of the document's company to email about it, when its organization has email notifications on. */
export function findDocumentEmailRecipients(
  tx: Db,
  tenant: Tenant,
  documentId: string,
): Promise<Array<{ user_id: string }>> {
  return many<{ user_id: string }>(
    tx,
    `SELECT a.user_id
       FROM documents d
       JOIN organizations o ON o.id = d.organization_id AND o.email_notifications
       JOIN company_admins a ON a.company_id = d.company_id
      WHERE d.id = $1 AND d.organization_id = $2 AND d.environment = $3`,
    [documentId, tenant.organizationId, tenant.environment],
  );
}

/** The organization's technical contact of a webhook endpoint, or null when it has none. */
export function findEndpointContact(tx: Db, endpointId: string): Promise<{ contact_email: string } | null> {
  return one<{ contact_email: string }>(
    tx,
    `SELECT o.contact_email
       FROM webhook_endpoints e JOIN organizations o ON o.id = e.organization_id
      WHERE e.id = $1 AND o.contact_email IS NOT NULL`,
    [endpointId],
  );
}

/** The organization's technical contact, or null when it has none. */
export function findOrganizationContact(tx: Db, organizationId: string): Promise<{ contact_email: string } | null> {
  return one<{ contact_email: string }>(
    tx,
    'SELECT contact_email FROM organizations WHERE id = $1 AND contact_email IS NOT NULL',
    [organizationId],
  );
}

/** What the "new document" email says and whether it may still go (notifications on, recipient still an admin). */
export interface EmailFacts {
  document_id: string;
  document_type: string;
  file_name: string;
  file_type: string;
  size_bytes: number;
  created_at: Date;
  company_id: string;
  order_type: string | null;
  legal_name: string;
  org_name: string;
  branding: { primaryColor?: string | null; logoUrl?: string | null };
  email_notifications: boolean;
  full_name: string;
  email: string;
  still_admin: boolean;
}

/** The document, its company, organization and order, and the recipient, for the "new document" email; null when gone. */
export function findDocumentEmailFacts(db: Db, documentId: string, userId: string): Promise<EmailFacts | null> {
  return one<EmailFacts>(
    db,
    `SELECT d.id AS document_id, d.document_type, d.file_name, d.file_type, d.size_bytes, d.created_at, d.company_id, o.order_type,
              c.legal_name, org.name AS org_name, org.branding, org.email_notifications, u.full_name, u.email,
              EXISTS (SELECT 1 FROM company_admins a WHERE a.company_id = d.company_id AND a.user_id = u.id) AS still_admin
         FROM documents d
         JOIN companies c ON c.id = d.company_id
         JOIN organizations org ON org.id = d.organization_id
         JOIN users u ON u.id = $2 AND u.organization_id = d.organization_id AND u.environment = d.environment
         LEFT JOIN orders o ON o.id = d.order_id
        WHERE d.id = $1`,
    [documentId, userId],
  );
}

/** What the "webhook endpoint disabled" email needs, and whether the endpoint is still disabled and not deleted. */
export interface EndpointFacts {
  id: string;
  url: string;
  environment: 'live' | 'test';
  disabled: boolean;
  deleted: boolean;
  failing_since: Date | null;
  org_name: string;
  contact_email: string | null;
}

/** The endpoint with its organization's name and technical contact, or null. */
export function findDisabledEndpointFacts(db: Db, endpointId: string): Promise<EndpointFacts | null> {
  return one<EndpointFacts>(
    db,
    `SELECT e.id, e.url, e.environment, e.disabled, e.deleted_at IS NOT NULL AS deleted, e.failing_since, o.name AS org_name, o.contact_email
         FROM webhook_endpoints e JOIN organizations o ON o.id = e.organization_id
        WHERE e.id = $1`,
    [endpointId],
  );
}

/** The endpoint's most recent delivery attempts, newest first, with their event types (status code null: no answer). */
export function listRecentAttempts(
  db: Db,
  endpointId: string,
  limit: number,
): Promise<Array<{ created_at: Date; status_code: number | null; error: string | null; type: string }>> {
  return many<{ created_at: Date; status_code: number | null; error: string | null; type: string }>(
    db,
    `SELECT a.created_at, a.status_code, a.error, ev.type
         FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id JOIN events ev ON ev.id = d.event_id
        WHERE d.endpoint_id = $1 ORDER BY a.created_at DESC, a.id DESC LIMIT $2`,
    [endpointId, limit],
  );
}
