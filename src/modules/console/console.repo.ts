import type { Environment } from '../../context.js';
import { many, type Db } from '../../lib/db.js';
import type { LedgerEntryRow } from '../billing/ledger.js';

/** An organization with its balances in cents per environment, active key count and open live orders. */
export interface OrganizationSummaryRow {
  id: string;
  name: string;
  white_label_domain: string | null;
  live: number;
  test: number;
  keys: number;
  open: number;
  created_at: Date;
}

/** Every organization with balances (cents), active keys and open live orders, newest first (one query). */
export function listOrganizationRows(db: Db): Promise<OrganizationSummaryRow[]> {
  return many<OrganizationSummaryRow>(
    db,
    `SELECT o.id, o.name, o.white_label_domain, o.created_at,
            COALESCE((SELECT balance_cents FROM balances b WHERE b.organization_id = o.id AND b.environment = 'live'), 0) AS live,
            COALESCE((SELECT balance_cents FROM balances b WHERE b.organization_id = o.id AND b.environment = 'test'), 0) AS test,
            (SELECT count(*)::int FROM api_keys k WHERE k.organization_id = o.id AND k.revoked_at IS NULL) AS keys,
            (SELECT count(*)::int FROM orders r WHERE r.organization_id = o.id AND r.environment = 'live' AND r.filing_status IN ('submitted', 'pending', 'exception')) AS open
       FROM organizations o ORDER BY o.created_at DESC`,
  );
}

/** The most recent ledger entries of one tenant, newest first (cents). */
export function listRecentLedger(db: Db, organizationId: string, environment: Environment, limit: number) {
  return many<
    Pick<
      LedgerEntryRow,
      | 'id'
      | 'type'
      | 'amount_cents'
      | 'balance_after_cents'
      | 'line_type'
      | 'description'
      | 'order_id'
      | 'created_by'
      | 'created_at'
    >
  >(
    db,
    `SELECT id, type, amount_cents, balance_after_cents, line_type, description, order_id, created_by, created_at
       FROM ledger_entries WHERE organization_id = $1 AND environment = $2 ORDER BY id DESC LIMIT $3`,
    [organizationId, environment, limit],
  );
}

/** A row of listWebhookSummaryRows. */
export interface WebhookSummaryRow {
  id: string;
  name: string;
  endpoints: number;
  failing: number;
  disabled: number;
  ok: number;
  bad: number;
  pending: number;
  due: number;
}

/** Per organization with endpoints: endpoint counts (all, failing, disabled), attempts in the last `windowHours` (2xx, other) and pending and due deliveries; worst first. */
export function listWebhookSummaryRows(db: Db, windowHours: number): Promise<WebhookSummaryRow[]> {
  return many<WebhookSummaryRow>(
    db,
    `SELECT org.id, org.name,
            count(e.id)::int AS endpoints,
            count(e.id) FILTER (WHERE e.failing_since IS NOT NULL AND NOT e.disabled)::int AS failing,
            count(e.id) FILTER (WHERE e.disabled)::int AS disabled,
            COALESCE(sum(a.ok), 0)::int AS ok, COALESCE(sum(a.bad), 0)::int AS bad, COALESCE(sum(p.pending), 0)::int AS pending,
            COALESCE(sum(p.due), 0)::int AS due
       FROM organizations org
       JOIN webhook_endpoints e ON e.organization_id = org.id AND e.deleted_at IS NULL
       LEFT JOIN LATERAL (
         SELECT count(*) FILTER (WHERE at.status_code BETWEEN 200 AND 299) AS ok, count(*) FILTER (WHERE at.status_code IS NULL OR at.status_code NOT BETWEEN 200 AND 299) AS bad
           FROM webhook_deliveries d JOIN webhook_attempts at ON at.delivery_id = d.id
          WHERE d.endpoint_id = e.id AND at.created_at > now() - make_interval(hours => $1)) a ON true
       LEFT JOIN LATERAL (SELECT count(*) AS pending, count(*) FILTER (WHERE d.next_attempt_at <= now()) AS due
                            FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.status = 'pending') p ON true
      GROUP BY org.id, org.name
      ORDER BY count(e.id) FILTER (WHERE e.disabled) DESC, count(e.id) FILTER (WHERE e.failing_since IS NOT NULL) DESC, COALESCE(sum(a.bad), 0) DESC, lower(org.name)`,
    [windowHours],
  );
}

/** A row of listDisabledEndpointRows. */
export interface DisabledEndpointRow {
  id: string;
  environment: Environment;
  url: string;
  disabled_reason: string | null;
  org_id: string;
  org_name: string;
  contact_email: string | null;
  updated_at: Date;
}

/** Disabled, not deleted endpoints of every organization with its name and contact, most recently changed first. */
export function listDisabledEndpointRows(db: Db, limit: number): Promise<DisabledEndpointRow[]> {
  return many<DisabledEndpointRow>(
    db,
    `SELECT e.id, e.environment, e.url, e.disabled_reason, o.id AS org_id, o.name AS org_name, o.contact_email, e.updated_at
       FROM webhook_endpoints e JOIN organizations o ON o.id = e.organization_id
      WHERE e.disabled AND e.deleted_at IS NULL
      ORDER BY e.updated_at DESC LIMIT $1`,
    [limit],
  );
}

/** A row of listEndpointHealthRows. */
export interface EndpointHealthRow {
  id: string;
  environment: Environment;
  url: string;
  event_types: string[];
  disabled: boolean;
  disabled_reason: string | null;
  failing_since: Date | null;
  ok: number;
  bad: number;
  last_code: number | null;
  last_at: Date | null;
}

/** The organization's endpoints (not deleted) with attempt counts in the last `windowHours` and the last attempt; disabled, then failing first. */
export function listEndpointHealthRows(
  db: Db,
  organizationId: string,
  windowHours: number,
): Promise<EndpointHealthRow[]> {
  return many<EndpointHealthRow>(
    db,
    `SELECT e.id, e.environment, e.url, e.event_types, e.disabled, e.disabled_reason, e.failing_since,
            COALESCE(s.ok, 0)::int AS ok, COALESCE(s.bad, 0)::int AS bad, l.status_code AS last_code, l.created_at AS last_at
       FROM webhook_endpoints e
       LEFT JOIN LATERAL (
         SELECT count(*) FILTER (WHERE a.status_code BETWEEN 200 AND 299) AS ok, count(*) FILTER (WHERE a.status_code IS NULL OR a.status_code NOT BETWEEN 200 AND 299) AS bad
           FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id
          WHERE d.endpoint_id = e.id AND a.created_at > now() - make_interval(hours => $2)) s ON true
       LEFT JOIN LATERAL (
         SELECT a.status_code, a.created_at FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id
          WHERE d.endpoint_id = e.id ORDER BY a.created_at DESC LIMIT 1) l ON true
      WHERE e.organization_id = $1 AND e.deleted_at IS NULL
      ORDER BY e.disabled DESC, (e.failing_since IS NOT NULL) DESC, e.environment, e.created_at`,
    [organizationId, windowHours],
  );
}

/** A row of listRecentAttemptRows. */
export interface RecentAttemptRow {
  created_at: Date;
  endpoint_id: string;
  environment: Environment;
  url: string;
  event_id: string;
  type: string;
  attempt_number: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  status: string;
}

/** The organization's most recent delivery attempts with their endpoint, event type and delivery status, newest first. */
export function listRecentAttemptRows(db: Db, organizationId: string, limit: number): Promise<RecentAttemptRow[]> {
  return many<RecentAttemptRow>(
    db,
    `SELECT a.created_at, d.endpoint_id, a.environment, a.url, d.event_id, ev.type, a.attempt_number, a.status_code, a.duration_ms, a.error, d.status
       FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id JOIN events ev ON ev.id = d.event_id
      WHERE a.organization_id = $1 ORDER BY a.created_at DESC, a.id DESC LIMIT $2`,
    [organizationId, limit],
  );
}
