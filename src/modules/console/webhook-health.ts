import type { Environment } from '../../context.js';
import { many, type Db } from '../../lib/db.js';
import { notFound } from '../../lib/errors.js';
import { findOrganization } from '../organizations/organizations.repo.js';
import { webhookBacklog, type WebhookBacklog } from '../webhooks/dispatch.repo.js';

export type { WebhookBacklog };

/**
 * The delivery backlog of the whole service (WH-19): deliveries due now, in flight included, and the age in
 * seconds of the oldest. A backlog that grows, or an oldest age beyond a few seconds, means the dispatchers
 * cannot keep up (add worker processes) or cannot reach the database.
 */
export function deliveryBacklog(db: Db): Promise<WebhookBacklog> {
  return webhookBacklog(db);
}

/** Webhook health looks back this far for attempt counts. */
export const HEALTH_WINDOW_HOURS = 24;

/** One organization's webhook summary across both environments. */
export interface OrgWebhookSummary {
  organizationId: string;
  organizationName: string;
  endpoints: number;
  failing: number;
  disabled: number;
  attemptsOk: number;
  attemptsFailed: number;
  pendingDeliveries: number;
  /** Pending deliveries due now (WH-19): the organization's share of the backlog. */
  dueDeliveries: number;
}

/** Every organization with at least one endpoint, worst first (disabled, then failing, then failed attempts). */
export async function webhookOverview(db: Db): Promise<OrgWebhookSummary[]> {
  const rows = await many<{ id: string; name: string; endpoints: number; failing: number; disabled: number; ok: number; bad: number; pending: number; due: number }>(
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
    [HEALTH_WINDOW_HOURS],
  );
  return rows.map((r) => ({
    organizationId: r.id, organizationName: r.name, endpoints: r.endpoints, failing: r.failing, disabled: r.disabled,
    attemptsOk: r.ok, attemptsFailed: r.bad, pendingDeliveries: r.pending, dueDeliveries: r.due,
  }));
}

/** A webhook endpoint the delivery policy (or its organization) disabled, with whom the organization has as contact. */
export interface DisabledEndpoint {
  id: string;
  environment: Environment;
  url: string;
  disabledReason: string | null;
  organizationId: string;
  organizationName: string;
  /** The technical contact emailed when the endpoint was disabled by the delivery policy; null: nobody was told. */
  contactEmail: string | null;
  /** ISO 8601: the endpoint's last change, normally the disable itself. */
  updatedAt: string;
}

/**
 * Every disabled (not deleted) endpoint of every organization, most recently changed first, for the top of the
 * webhook health page (WH-7: disabled endpoints need someone to act).
 */
export async function disabledEndpoints(db: Db, limit = 100): Promise<DisabledEndpoint[]> {
  const rows = await many<{ id: string; environment: Environment; url: string; disabled_reason: string | null; org_id: string; org_name: string; contact_email: string | null; updated_at: Date }>(
    db,
    `SELECT e.id, e.environment, e.url, e.disabled_reason, o.id AS org_id, o.name AS org_name, o.contact_email, e.updated_at
       FROM webhook_endpoints e JOIN organizations o ON o.id = e.organization_id
      WHERE e.disabled AND e.deleted_at IS NULL
      ORDER BY e.updated_at DESC LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({
    id: r.id, environment: r.environment, url: r.url, disabledReason: r.disabled_reason, organizationId: r.org_id, organizationName: r.org_name,
    contactEmail: r.contact_email, updatedAt: r.updated_at.toISOString(),
  }));
}

/** An endpoint's health: state, failing since, and attempt counts in the window (HEALTH_WINDOW_HOURS). Times ISO 8601. */
export interface EndpointHealth {
  id: string;
  environment: Environment;
  url: string;
  eventTypes: string[];
  state: 'healthy' | 'failing' | 'disabled';
  disabledReason: string | null;
  failingSince: string | null;
  attemptsOk: number;
  attemptsFailed: number;
  lastStatusCode: number | null;
  lastAttemptAt: string | null;
}

/** One recent attempt with its event, for the health page and `webhooks health --org`. `at` ISO 8601, `durationMs` ms. */
export interface RecentAttempt {
  at: string;
  endpointId: string;
  environment: Environment;
  url: string;
  eventId: string;
  eventType: string;
  attemptNumber: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  deliveryStatus: string;
}

/**
 * Webhook health of one organization: its endpoints (failing and disabled first) and its
 * most recent attempts with status codes. @throws AppError not_found for an unknown organization.
 */
export async function organizationWebhookHealth(db: Db, organizationId: string, attemptLimit = 50) {
  const org = await findOrganization(db, organizationId);
  if (!org) throw notFound('organization', organizationId);
  const endpoints = await many<{ id: string; environment: Environment; url: string; event_types: string[]; disabled: boolean; disabled_reason: string | null; failing_since: Date | null; ok: number; bad: number; last_code: number | null; last_at: Date | null }>(
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
    [organizationId, HEALTH_WINDOW_HOURS],
  );
  const attempts = await many<{ created_at: Date; endpoint_id: string; environment: Environment; url: string; event_id: string; type: string; attempt_number: number; status_code: number | null; duration_ms: number; error: string | null; status: string }>(
    db,
    `SELECT a.created_at, d.endpoint_id, a.environment, a.url, d.event_id, ev.type, a.attempt_number, a.status_code, a.duration_ms, a.error, d.status
       FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id JOIN events ev ON ev.id = d.event_id
      WHERE a.organization_id = $1 ORDER BY a.created_at DESC, a.id DESC LIMIT $2`,
    [organizationId, attemptLimit],
  );
  return {
    organization: { id: org.id, name: org.name, contactEmail: org.contact_email },
    windowHours: HEALTH_WINDOW_HOURS,
    endpoints: endpoints.map((e): EndpointHealth => ({
      id: e.id, environment: e.environment, url: e.url, eventTypes: e.event_types,
      state: e.disabled ? 'disabled' : e.failing_since ? 'failing' : 'healthy', disabledReason: e.disabled_reason,
      failingSince: e.failing_since?.toISOString() ?? null, attemptsOk: e.ok, attemptsFailed: e.bad,
      lastStatusCode: e.last_code, lastAttemptAt: e.last_at?.toISOString() ?? null,
    })),
    recentAttempts: attempts.map((a): RecentAttempt => ({
      at: a.created_at.toISOString(), endpointId: a.endpoint_id, environment: a.environment, url: a.url, eventId: a.event_id, eventType: a.type,
      attemptNumber: a.attempt_number, statusCode: a.status_code, durationMs: a.duration_ms, error: a.error, deliveryStatus: a.status,
    })),
  };
}
