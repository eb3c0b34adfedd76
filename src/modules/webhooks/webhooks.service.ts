import type { AppContext, Tenant } from '../../context.js';
import { type Db, withTransaction } from '../../lib/db.js';
import { AppError, notFound, ValidationError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { toPage, type Page, type PageParams } from '../../lib/pagination.js';
import { webhookEndpointSnapshot } from '../audit/audit-redaction.js';
import { type AuditActor, recordAudit } from '../audit/audit.service.js';
import { createDelivery } from './deliveries.service.js';
import { insertTestEvent } from './deliveries.repo.js';
import { deliveryView, type DeliveryView } from './deliveries.service.js';
import { findDelivery } from './deliveries.repo.js';
import { sealEndpointSecret } from './endpoint-secrets.js';
import { newSigningSecret } from './signature.js';
import { checkWebhookUrl, UnsafeWebhookUrlError } from './url-guard.js';
import * as repo from './webhooks.repo.js';
import { withFields } from '../../lib/objects.js';

/** Hours the replaced secret keeps signing beside the new one after a rotation (WH-3). */
const ROTATION_GRACE_HOURS = 24;

/** The endpoint as the API shows it: never its secret. Times ISO 8601. */
export interface EndpointView {
  id: string;
  url: string;
  description: string | null;
  eventTypes: string[];
  disabled: boolean;
  disabledReason: string | null;
  failingSince: string | null;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The API view of an endpoint row, without secrets; previousSecretExpiresAt only while the rotation grace lasts. */
function endpointView(r: repo.EndpointRow): EndpointView {
  const graceActive = r.previous_secret_expires_at && r.previous_secret_expires_at > new Date();
  return {
    id: r.id,
    url: r.url,
    description: r.description,
    eventTypes: r.event_types,
    disabled: r.disabled,
    disabledReason: r.disabled_reason,
    failingSince: r.failing_since?.toISOString() ?? null,
    previousSecretExpiresAt: graceActive ? r.previous_secret_expires_at!.toISOString() : null,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

/** Input of POST /webhook-endpoints (already schema-validated: known event types, unique, non-empty). */
export interface CreateEndpointInput {
  url: string;
  eventTypes: string[];
  description?: string;
}

/**
 * Registers an endpoint (WH-1, WH-13, SEC-4) with a fresh `whsec_` secret.
 * @returns the endpoint plus `secret`, the only time the secret is shown.
 * @throws ValidationError on `url` when it is not https, or is written with a non-public address (unless
 *   WEBHOOK_ALLOW_PRIVATE_NETWORKS=true). A host name is not resolved here (WH-13): whatever it resolves to, or
 *   whether it resolves at all, is judged before every attempt, so the answer tells nothing about internal DNS.
 *   AppError webhook_endpoint_limit_reached (409) when the tenant has WEBHOOK_ENDPOINTS_MAX endpoints (SEC-4).
 * `audit` (the portal's member; the integrator API passes none): recorded in the audit log in the insert's transaction
 * (AUDIT-1, AUDIT-2), as are the changes of updateEndpoint, deleteEndpoint and rotateSecret given one.
 */
export async function createEndpoint(
  ctx: AppContext,
  tenant: Tenant,
  input: CreateEndpointInput,
  audit?: AuditActor,
): Promise<EndpointView & { secret: string }> {
  checkUrl(ctx, input.url);
  const id = newId('webhookEndpoint');
  const secret = newSigningSecret();
  const row = await withTransaction(ctx.pool, async (tx) => {
    // SEC-4: the count and the insert are serialised per tenant, so concurrent creates never pass the cap together.
    const existing = await repo.lockAndCountEndpoints(tx, tenant);
    const max = ctx.config.webhookEndpointsMax;
    if (existing >= max) {
      throw new AppError(
        'webhook_endpoint_limit_reached',
        `This environment already has ${existing} webhook endpoints, the most allowed is ${max}; delete one (DELETE /webhook-endpoints/{id}, or Delete endpoint on its page in the partner portal) before creating another`,
      );
    }
    const created = await repo.insertEndpoint(tx, tenant, {
      id,
      url: input.url,
      description: input.description ?? null,
      eventTypes: input.eventTypes,
      secret: sealEndpointSecret(ctx, id, secret),
    });
    if (audit) await recordEndpointChange(tx, tenant, audit, 'webhook_endpoint.created', null, created);
    return created;
  });
  return withFields(endpointView(row), { secret });
}

/** GET /webhook-endpoints: the tenant's endpoints, newest first, cursor-paginated. */
export async function listEndpoints(ctx: AppContext, tenant: Tenant, page: PageParams): Promise<Page<EndpointView>> {
  const limit = page.limit ?? 20;
  return toPage(await repo.listEndpoints(ctx.pool, tenant, limit, page.startingAfter), limit, endpointView);
}

/**
 * GET /webhook-endpoints/{id}: the endpoint without its secret.
 * @throws AppError not_found (404) for unknown, deleted or other tenants' endpoints.
 */
export async function getEndpoint(ctx: AppContext, tenant: Tenant, id: string): Promise<EndpointView> {
  return endpointView(await endpointOrThrow(ctx, tenant, id));
}

/** Input of PATCH /webhook-endpoints/{id}; absent fields stay as they are. */
export interface UpdateEndpointInput {
  url?: string;
  eventTypes?: string[];
  description?: string | null;
  disabled?: boolean;
}

/**
 * PATCH: url (checked like at creation), eventTypes, description, disabled. Re-enabling clears the disabled
 * reason and the failure clock (failingSince), so the endpoint gets a full WEBHOOK_DISABLE_AFTER_HOURS again.
 * Deliveries that failed while it was disabled are not resent by this (use resend).
 * @throws not_found (404); ValidationError on `url`.
 */
export async function updateEndpoint(
  ctx: AppContext,
  tenant: Tenant,
  id: string,
  input: UpdateEndpointInput,
  audit?: AuditActor,
): Promise<EndpointView> {
  await endpointOrThrow(ctx, tenant, id);
  if (input.url !== undefined) checkUrl(ctx, input.url);
  return withTransaction(ctx.pool, async (tx) => {
    const current = await repo.findEndpoint(tx, tenant, id, true);
    if (!current) throw notFound('webhook endpoint', id);
    const disabledReason = input.disabled && !current.disabled ? 'Disabled through the API' : undefined;
    const row = await repo.updateEndpoint(tx, tenant, id, withFields(input, { disabledReason }));
    if (!row) throw notFound('webhook endpoint', id);
    if (audit) await recordEndpointChange(tx, tenant, audit, 'webhook_endpoint.updated', current, row);
    return endpointView(row);
  });
}

/**
 * DELETE: soft-deletes (rows stay for the delivery history); the endpoint then answers 404 and its pending
 * deliveries end as failed with reason "Endpoint deleted". @throws not_found (404).
 */
export async function deleteEndpoint(
  ctx: AppContext,
  tenant: Tenant,
  id: string,
  audit?: AuditActor,
): Promise<{ id: string; deleted: true }> {
  if (audit) {
    await withTransaction(ctx.pool, async (tx) => {
      const current = await repo.findEndpoint(tx, tenant, id, true);
      if (!current || !(await repo.softDeleteEndpoint(tx, tenant, id))) throw notFound('webhook endpoint', id);
      await recordEndpointChange(tx, tenant, audit, 'webhook_endpoint.deleted', current, null);
    });
    return { id, deleted: true };
  }
  // One statement that checks the tenant and deletes: a concurrent delete makes this one a 404, not a second delete.
  if (!(await repo.softDeleteEndpoint(ctx.pool, tenant, id))) throw notFound('webhook endpoint', id);
  return { id, deleted: true };
}

/**
 * Issues a new secret (WH-3). For 24 hours the replaced secret keeps signing beside it: each request
 * then carries two `v1=` entries, the new one first. Rotating again within those hours replaces the
 * older secret, so at most two are ever valid. @returns the endpoint plus the new `secret`, shown only now.
 * @throws AppError not_found (404) for an endpoint not in the tenant.
 */
export async function rotateSecret(
  ctx: AppContext,
  tenant: Tenant,
  id: string,
  audit?: AuditActor,
): Promise<EndpointView & { secret: string }> {
  // The UPDATE itself checks the tenant and that the endpoint is not deleted (it may be deleted concurrently), so a
  // secret is never issued for an endpoint the caller cannot see.
  const secret = newSigningSecret();
  const sealed = sealEndpointSecret(ctx, id, secret);
  const row = audit
    ? await withTransaction(ctx.pool, async (tx) => {
        const rotated = await repo.rotateEndpointSecret(tx, tenant, id, sealed, ROTATION_GRACE_HOURS);
        // AUDIT-3: the snapshots never hold a secret, so before and after read alike; the action says what changed.
        if (rotated) await recordEndpointChange(tx, tenant, audit, 'webhook_endpoint.secret_rotated', rotated, rotated);
        return rotated;
      })
    : await repo.rotateEndpointSecret(ctx.pool, tenant, id, sealed, ROTATION_GRACE_HOURS);
  if (!row) throw notFound('webhook endpoint', id);
  return withFields(endpointView(row), { secret });
}

/**
 * Sends a `webhook.test` event to this endpoint only. It is stored as an event row (so the delivery can be
 * inspected and resent like any other) but no other endpoint receives it and it cannot be subscribed to.
 * It gets one attempt, no retries, and never moves the endpoint's failure clock (a 410 still disables).
 * @returns the queued delivery. @throws not_found (404); conflict (409) when the endpoint is disabled.
 */
export async function sendTestEvent(ctx: AppContext, tenant: Tenant, id: string): Promise<DeliveryView> {
  return withTransaction(ctx.pool, async (tx) => {
    const endpoint = await repo.findEndpoint(tx, tenant, id);
    if (!endpoint) throw notFound('webhook endpoint', id);
    if (endpoint.disabled)
      throw new AppError(
        'conflict',
        `Webhook endpoint ${id} is disabled; enable it with PATCH {"disabled": false} before testing it`,
      );
    const event = await insertTestEvent(tx, tenant, {
      endpointId: id,
      message: 'A test event sent from POST /webhook-endpoints/{id}/test',
    });
    const deliveryId = await createDelivery(tx, tenant, id, event.id, false);
    return deliveryView((await findDelivery(tx, tenant, deliveryId))!);
  });
}

async function endpointOrThrow(ctx: AppContext, tenant: Tenant, id: string): Promise<repo.EndpointRow> {
  const row = await repo.findEndpoint(ctx.pool, tenant, id);
  if (!row) throw notFound('webhook endpoint', id);
  return row;
}

// WH-13: no DNS look-up, so a private name and a name without an address get the same answer (201).
function checkUrl(ctx: AppContext, url: string): void {
  try {
    checkWebhookUrl(url, ctx.config.webhookAllowPrivateNetworks);
  } catch (err) {
    if (err instanceof UnsafeWebhookUrlError) throw new ValidationError([{ field: 'url', message: err.message }]);
    throw err;
  }
}

// AUDIT-1, AUDIT-2: a change of an endpoint by a person (the portal passes its member; the integrator API nobody), in
// the change's transaction, its secrets never read (AUDIT-3).
async function recordEndpointChange(
  tx: Db,
  tenant: Tenant,
  actor: AuditActor,
  action:
    | 'webhook_endpoint.created'
    | 'webhook_endpoint.updated'
    | 'webhook_endpoint.deleted'
    | 'webhook_endpoint.secret_rotated',
  before: repo.EndpointRow | null,
  after: repo.EndpointRow | null,
): Promise<void> {
  await recordAudit(tx, {
    actor,
    organizationId: tenant.organizationId,
    environment: tenant.environment,
    action,
    targetId: (after ?? before)!.id,
    before: before && webhookEndpointSnapshot(before),
    after: after && webhookEndpointSnapshot(after),
  });
}
