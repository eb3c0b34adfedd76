import type pg from 'pg';
import { isEmailAddress } from '../../lib/validation.js';
import type { Environment, Tenant } from '../../context.js';
import { withTransaction, type Db } from '../../lib/db.js';
import { AppError, FieldErrors, notFound, ValidationError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { redact, sha256 } from '../../lib/secrets.js';
import { apiKeySnapshot } from '../audit/audit-redaction.js';
import { type AuditActor, recordAudit } from '../audit/audit.service.js';
import { forgetApiKeyInProcess } from './api-key-cache.js';
import { newApiKey } from './api-key-format.js';
import * as apiKeys from './api-keys.repo.js';
import * as repo from './organizations.repo.js';

/** A newly created API key. `key` is the secret itself, shown once and never stored; createdAt ISO 8601. */
export interface NewApiKey {
  id: string;
  environment: Environment;
  key: string;
  createdAt: string;
}

/**
 * Makes a key `sk_live_`/`sk_test_` + 32 random bytes (base64url) + their CRC32 in base62 (newApiKey) and stores only
 * its sha256, marked as checksummed (AUTH-1, AUTH-3).
 */
async function createApiKey(db: Db, organizationId: string, environment: Environment, name = ''): Promise<NewApiKey> {
  const key = newApiKey(environment);
  const row = await apiKeys.insertApiKey(db, {
    id: newId('apiKey'),
    organizationId,
    environment,
    name,
    keyHash: sha256(key),
    redacted: redact(key),
  });
  return { id: row.id, environment, key, createdAt: row.created_at.toISOString() };
}

/**
 * The technical contact email as stored: trimmed; empty, null and undefined mean none (null). Syntax is validator's
 * isEmail, the same as the API schemas' `format: 'email'`, so the CLI and console get the API's rule.
 * A bad address is added to `errors` when given (the caller throws with its other field errors), else thrown.
 * @throws ValidationError naming `contactEmail` (only without `errors`).
 */
export function normalizeContactEmail(value: string | null | undefined, errors?: FieldErrors): string | null {
  const email = value?.trim();
  if (!email) return null;
  const collector = errors ?? new FieldErrors();
  if (email.length > 254 || !isEmailAddress(email))
    collector.add('contactEmail', 'must be an email address, e.g. dev-alerts@example.com');
  if (!errors) collector.throwIfAny();
  return email;
}

/** Longest organization name (ORG-1, LIM-2), whichever way the organization is created. */
const MAX_ORGANIZATION_NAME_LENGTH = 200;

/**
 * An organization with one live and one test key, created in one transaction (ORG-1). `name`: 1 to 200 characters,
 * not blank. `options.contactEmail`: the technical contact told when a webhook endpoint gets disabled (WH-7).
 * @throws ValidationError naming `name` (blank or too long) and `contactEmail` (not an email address).
 */
export async function createOrganization(
  pool: pg.Pool,
  name: string,
  options: { contactEmail?: string | null } = {},
): Promise<{ organization: repo.OrganizationRow; apiKeys: { live: NewApiKey; test: NewApiKey } }> {
  const errors = new FieldErrors();
  if (!name.trim()) errors.add('name', 'must not be blank');
  errors.maxLength('name', name, MAX_ORGANIZATION_NAME_LENGTH);
  const contactEmail = normalizeContactEmail(options.contactEmail, errors);
  errors.throwIfAny();
  return withTransaction(pool, async (tx) => {
    const organization = await repo.insertOrganization(tx, newId('organization'), name, contactEmail);
    const live = await createApiKey(tx, organization.id, 'live');
    const test = await createApiKey(tx, organization.id, 'test');
    return { organization, apiKeys: { live, test } };
  });
}

/**
 * The answer to creating an organization (admin API and `org create --json`; ORG-1):
 * `{id, name, contactEmail, apiKeys: {live: 'sk_live_…', test: 'sk_test_…'}, apiKeyIds: {live: 'key_…', test:
 * 'key_…'}}`.
 */
export function createdOrganizationView(created: Awaited<ReturnType<typeof createOrganization>>) {
  const { organization, apiKeys } = created;
  return {
    id: organization.id,
    name: organization.name,
    contactEmail: organization.contact_email,
    apiKeys: { live: apiKeys.live.key, test: apiKeys.test.key },
    apiKeyIds: { live: apiKeys.live.id, test: apiKeys.test.id },
  };
}

/** @throws AppError not_found when there is no such organization. */
export async function getOrganizationOrThrow(db: Db, id: string): Promise<repo.OrganizationRow> {
  const org = await repo.findOrganization(db, id);
  if (!org) throw notFound('organization', id);
  return org;
}

/** Longest name of a key (PORTAL-11). */
const MAX_KEY_NAME_LENGTH = 100;
/** The longest a rolled key keeps working beside its replacement (PORTAL-12): 7 days, in hours. */
const MAX_ROLL_OVERLAP_HOURS = 7 * 24;

/**
 * Creates a key for an existing organization (AUTH-3). `name` (PORTAL-11): trimmed, 1 to 100 characters when given;
 * keys made without one (admin API, CLI) have ''. With `audit` (portal, console, admin API, CLI) the key is recorded in
 * the audit log in the same transaction (AUDIT-1, AUDIT-2). @throws AppError not_found; ValidationError naming `name`.
 */
export async function addApiKey(
  pool: pg.Pool,
  organizationId: string,
  environment: Environment,
  name?: string,
  audit?: AuditActor,
): Promise<NewApiKey> {
  const keyName = name === undefined ? '' : checkedKeyName(name);
  return withTransaction(pool, async (tx) => {
    await getOrganizationOrThrow(tx, organizationId);
    const key = await createApiKey(tx, organizationId, environment, keyName);
    if (audit) await recordKeyCreated(tx, audit, organizationId, key, keyName);
    return key;
  });
}

// AUDIT-1: a key made by a person, recorded in the transaction that stores it; its secret is never read (AUDIT-3).
async function recordKeyCreated(tx: Db, actor: AuditActor, organizationId: string, key: NewApiKey, name: string) {
  await recordAudit(tx, {
    actor,
    organizationId,
    environment: key.environment,
    action: 'api_key.created',
    targetId: key.id,
    before: null,
    after: apiKeySnapshot({
      id: key.id,
      environment: key.environment,
      name,
      redacted: redact(key.key),
      createdAt: key.createdAt,
    }),
  });
}

function checkedKeyName(name: string): string {
  const trimmed = name.trim();
  const errors = new FieldErrors();
  if (!trimmed) errors.add('name', 'must not be blank');
  errors.maxLength('name', trimmed, MAX_KEY_NAME_LENGTH);
  errors.throwIfAny();
  return trimmed;
}

/** The tenant's keys (its organization, its environment), revoked and ended ones included, with their last use. */
export function listTenantKeys(db: Db, tenant: Tenant): Promise<apiKeys.ApiKeyListRow[]> {
  return apiKeys.listApiKeys(db, tenant.organizationId, tenant.environment);
}

/**
 * Rolls the tenant's key `keyId` (PORTAL-12): a new key of the same name and environment, shown once, while the old
 * one keeps working for `overlapHours` (a whole number, 0 to MAX_ROLL_OVERLAP_HOURS; 0 ends it now) and then stops,
 * its event streams with it (EVT-9). Both in one transaction, with their audit entries given `audit` (AUDIT-1).
 * @returns the new key and when the old one ends (ISO 8601).
 * @throws ValidationError naming `overlapHours`; AppError not_found when the tenant has no such key still working.
 */
export async function rollKey(
  pool: pg.Pool,
  tenant: Tenant,
  keyId: string,
  overlapHours: number,
  audit?: AuditActor,
): Promise<{ key: NewApiKey & { name: string }; replacedEndsAt: string }> {
  if (!Number.isInteger(overlapHours) || overlapHours < 0 || overlapHours > MAX_ROLL_OVERLAP_HOURS)
    throw new ValidationError([
      { field: 'overlapHours', message: `must be a whole number of hours from 0 to ${MAX_ROLL_OVERLAP_HOURS}` },
    ]);
  const { old, key } = await withTransaction(pool, async (tx) => {
    const before = audit ? await apiKeys.lockApiKey(tx, tenant.organizationId, keyId, tenant.environment) : null;
    const old = await apiKeys.endApiKeyAfter(tx, tenant, keyId, overlapHours * 3600);
    if (!old) throw new AppError('not_found', `No such API key in use: '${keyId}'`);
    const key = await createApiKey(tx, tenant.organizationId, tenant.environment, old.name);
    if (audit && before) {
      await recordAudit(tx, {
        actor: audit,
        organizationId: tenant.organizationId,
        environment: tenant.environment,
        action: 'api_key.rolled',
        targetId: keyId,
        before: apiKeySnapshot(before),
        after: apiKeySnapshot(old),
      });
      await recordKeyCreated(tx, audit, tenant.organizationId, key, old.name);
    }
    return { old, key };
  });
  // AUTH-12: an entry this process holds would not know the new end; the others hear the commit's NOTIFY.
  forgetApiKeyInProcess(old.key_hash);
  return { key: { ...key, name: old.name }, replacedEndsAt: old.expires_at!.toISOString() };
}

/**
 * Revokes a key at once (the next request with it gets 401). `organizationId` null (CLI `keys revoke key_…`):
 * whichever organization owns the key; `environment` (the portal, PORTAL-11): only a key of that environment. With
 * `audit` the revocation is recorded in the audit log in the same transaction (AUDIT-1, AUDIT-2). @throws not_found.
 */
export async function revokeKey(
  pool: pg.Pool,
  organizationId: string | null,
  keyId: string,
  environment?: Environment,
  audit?: AuditActor,
): Promise<apiKeys.ApiKeyRow> {
  const found = await withTransaction(pool, async (tx) => {
    const before = audit ? await apiKeys.lockApiKey(tx, organizationId, keyId, environment) : null;
    const after = await apiKeys.revokeApiKey(tx, organizationId, keyId, environment);
    // AUDIT-5: revoking a revoked key changes and records nothing.
    if (audit && before && after && !before.revoked_at)
      await recordAudit(tx, {
        actor: audit,
        organizationId: before.organization_id,
        environment: before.environment,
        action: 'api_key.revoked',
        targetId: keyId,
        before: apiKeySnapshot(before),
        after: apiKeySnapshot(after),
      });
    return after;
  });
  if (!found)
    throw new AppError(
      'not_found',
      organizationId ? `Organization '${organizationId}' has no API key '${keyId}'` : `No such API key: '${keyId}'`,
    );
  const { key_hash: keyHash, ...row } = found;
  // AUTH-12: this process forgets it now; the others when the NOTIFY of the commit reaches them.
  forgetApiKeyInProcess(keyHash);
  return row;
}

/** An API key as listed to operators: never the key itself, only its redacted form. */
export function serializeApiKey(k: apiKeys.ApiKeyRow) {
  return {
    id: k.id,
    environment: k.environment,
    redactedKey: k.redacted,
    createdAt: k.created_at.toISOString(),
    revokedAt: k.revoked_at?.toISOString() ?? null,
  };
}

/** An organization with its API keys and balances per environment in cents; organizationAdminView presents it. */
export interface OrganizationAdminData {
  organization: repo.OrganizationRow;
  keys: apiKeys.ApiKeyRow[];
  balanceCents: Record<Environment, number>;
}

/** Reads what the operator's view of an organization shows (admin API, console page): keys and balances (cents). */
export async function loadOrganizationAdmin(db: Db, o: repo.OrganizationRow): Promise<OrganizationAdminData> {
  const [keys, balanceCents] = await Promise.all([apiKeys.listApiKeys(db, o.id), repo.findBalances(db, o.id)]);
  return { organization: o, keys, balanceCents };
}

/** Every organization, as stored (operators' lists: admin API, console pickers). */
export function listOrganizations(db: Db): Promise<repo.OrganizationRow[]> {
  return repo.listOrganizations(db);
}

/** The integrator's organization in one environment, with that environment's balance in cents. */
export interface TenantOrganization {
  organization: repo.OrganizationRow;
  environment: Environment;
  balanceCents: number;
}

/**
 * Reads the integrator's organization and its balance (cents) for one environment; organizationView presents it.
 * @throws AppError not_found (404) when the organization no longer exists.
 */
export async function loadTenantOrganization(db: Db, tenant: Tenant): Promise<TenantOrganization> {
  const o = await getOrganizationOrThrow(db, tenant.organizationId);
  const balanceCents = await repo.findBalance(db, tenant);
  return { organization: o, environment: tenant.environment, balanceCents };
}
