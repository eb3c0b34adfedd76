import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { Tenant } from '../../context.js';

/*
 * Responses kept for Idempotency-Key replays are stored encrypted. Some carry credentials shown only at creation
 * (POST /auth/magic-link: the magic-link token, which is otherwise stored only as its sha256; POST /webhook-endpoints
 * and rotate-secret: the whsec_ secret), so a plain copy in idempotency_keys would let anyone who can read the database
 * (a backup, a read replica) sign in as a dashboard user. AES-256-GCM under a key derived from the instance secret,
 * with the tenant and the Idempotency-Key as associated data, so a sealed body cannot be replayed from another row.
 */

/** The jsonb stored in idempotency_keys.response_body for a sealed response. */
export interface SealedBody {
  sealed: string;
}

const VERSION = 'v1';

function keyOf(instanceSecret: string): Buffer {
  return createHmac('sha256', instanceSecret).update('idempotency-response:v1').digest();
}

function aad(tenant: Tenant, idempotencyKey: string): Buffer {
  return Buffer.from(`${tenant.organizationId}\n${tenant.environment}\n${idempotencyKey}`, 'utf8');
}

/**
 * Encrypts a response body (any JSON value) for storage under one tenant's Idempotency-Key.
 * @param instanceSecret ctx.secrets.fileUrlSecret (kept outside the database).
 */
export function sealResponse(
  instanceSecret: string,
  tenant: Tenant,
  idempotencyKey: string,
  body: unknown,
): SealedBody {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(instanceSecret), iv);
  cipher.setAAD(aad(tenant, idempotencyKey));
  const data = Buffer.concat([cipher.update(JSON.stringify(body), 'utf8'), cipher.final()]);
  return { sealed: `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64url')}` };
}

/**
 * The body a replay sends.
 * @returns `{ok: false}` when the stored body cannot be opened (the instance secret changed, or the row was tampered
 * with).
 */
export function openResponse(
  instanceSecret: string,
  tenant: Tenant,
  idempotencyKey: string,
  stored: unknown,
): { ok: true; body: unknown } | { ok: false } {
  const sealed = (stored as Partial<SealedBody> | null)?.sealed;
  if (typeof sealed !== 'string') return { ok: false };
  const [version, payload] = sealed.split('.');
  if (version !== VERSION || !payload) return { ok: false };
  try {
    const raw = Buffer.from(payload, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', keyOf(instanceSecret), raw.subarray(0, 12));
    decipher.setAAD(aad(tenant, idempotencyKey));
    decipher.setAuthTag(raw.subarray(12, 28));
    const json = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    return { ok: true, body: JSON.parse(json) };
  } catch {
    return { ok: false };
  }
}
