import type { Environment } from '../../context.js';
import type { Db } from '../../lib/db.js';
import { notFound } from '../../lib/errors.js';
import { findOrganization } from '../organizations/organizations.repo.js';
import { webhookBacklog, type WebhookBacklog } from '../webhooks/dispatch.repo.js';
import * as repo from './console.repo.js';

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
const HEALTH_WINDOW_HOURS = 24;

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
  const rows = await repo.listWebhookSummaryRows(db, HEALTH_WINDOW_HOURS);
  return rows.map((r) => ({
    organizationId: r.id,
    organizationName: r.name,
    endpoints: r.endpoints,
    failing: r.failing,
    disabled: r.disabled,
    attemptsOk: r.ok,
    attemptsFailed: r.bad,
    pendingDeliveries: r.pending,
    dueDeliveries: r.due,
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
  const rows = await repo.listDisabledEndpointRows(db, limit);
  return rows.map((r) => ({
    id: r.id,
    environment: r.environment,
    url: r.url,
    disabledReason: r.disabled_reason,
    organizationId: r.org_id,
    organizationName: r.org_name,
    contactEmail: r.contact_email,
    updatedAt: r.updated_at.toISOString(),
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
  const endpoints = await repo.listEndpointHealthRows(db, organizationId, HEALTH_WINDOW_HOURS);
  const attempts = await repo.listRecentAttemptRows(db, organizationId, attemptLimit);
  return {
    organization: { id: org.id, name: org.name, contactEmail: org.contact_email },
    windowHours: HEALTH_WINDOW_HOURS,
    endpoints: endpoints.map(
      (e): EndpointHealth => ({
        id: e.id,
        environment: e.environment,
        url: e.url,
        eventTypes: e.event_types,
        state: e.disabled ? 'disabled' : e.failing_since ? 'failing' : 'healthy',
        disabledReason: e.disabled_reason,
        failingSince: e.failing_since?.toISOString() ?? null,
        attemptsOk: e.ok,
        attemptsFailed: e.bad,
        lastStatusCode: e.last_code,
        lastAttemptAt: e.last_at?.toISOString() ?? null,
      }),
    ),
    recentAttempts: attempts.map(
      (a): RecentAttempt => ({
        at: a.created_at.toISOString(),
        endpointId: a.endpoint_id,
        environment: a.environment,
        url: a.url,
        eventId: a.event_id,
        eventType: a.type,
        attemptNumber: a.attempt_number,
        statusCode: a.status_code,
        durationMs: a.duration_ms,
        error: a.error,
        deliveryStatus: a.status,
      }),
    ),
  };
}
