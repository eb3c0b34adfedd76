import type { Environment } from '../../context.js';

/*
 * What of a target the audit log keeps (AUDIT-3): an allow-list of fields per kind of target, so a field added to a
 * row later (a new secret, a token, a hash) stays out of the log until someone names it here. Every snapshot given to
 * recordAudit goes through redactSnapshot, whoever built it.
 */

/** The kinds of target the audit log records changes to (AUDIT-1); an action is `<kind>.<verb>`. */
const AUDIT_TARGET_KINDS = [
  'api_key',
  'webhook_endpoint',
  'member',
  'invitation',
  'price',
  'wholesale_price',
  'branding',
  'domain',
  'billing_settings',
  'auto_recharge',
] as const;

/** A kind of audited target. */
export type AuditTargetKind = (typeof AUDIT_TARGET_KINDS)[number];

/** The fields each kind's snapshot may keep (AUDIT-3). Amounts are integer cents, times ISO 8601. */
const ALLOWED_FIELDS: Record<AuditTargetKind, readonly string[]> = {
  api_key: ['id', 'environment', 'name', 'redactedKey', 'createdAt', 'revokedAt', 'expiresAt'],
  webhook_endpoint: ['id', 'environment', 'url', 'description', 'eventTypes', 'disabled', 'disabledReason'],
  member: ['memberId', 'email', 'name', 'role'],
  invitation: ['id', 'email', 'role', 'expiresAt'],
  price: ['type', 'environment', 'retailCents', 'effectiveRetailCents', 'wholesaleCents', 'enabled'],
  wholesale_price: ['type', 'wholesaleCents', 'defaultWholesaleCents', 'overridden'],
  branding: ['logoUrl', 'primaryColor', 'accentColor'],
  domain: ['whiteLabelDomain', 'status', 'verifiedAt', 'vouched'],
  billing_settings: ['dashboardBilling', 'emailNotifications', 'contactEmail', 'lowBalanceThresholdCents'],
  auto_recharge: ['enabled', 'thresholdCents', 'amountCents', 'paymentMethodSaved'],
};

/** A target's fields as the audit log keeps them: JSON values only. */
export type AuditSnapshot = Record<string, string | number | boolean | null | string[]>;

/**
 * Keeps only the allow-listed fields of `kind` (AUDIT-3); a field not listed is dropped whatever its name, and a value
 * that is not JSON text, a number, a boolean, null or a list of strings is dropped too. Dates become ISO 8601.
 * @returns null for a null snapshot (nothing before a creation, nothing after a removal).
 */
export function redactSnapshot(kind: AuditTargetKind, value: Record<string, unknown> | null): AuditSnapshot | null {
  if (value === null) return null;
  const kept: AuditSnapshot = {};
  for (const name of ALLOWED_FIELDS[kind]) {
    if (!(name in value)) continue;
    const v = value[name] instanceof Date ? (value[name] as Date).toISOString() : value[name];
    if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) kept[name] = v as string | number | boolean;
    else if (Array.isArray(v) && v.every((s) => typeof s === 'string')) kept[name] = [...v];
  }
  return kept;
}

/** An API key row or the key just created (its secret `key` is not read). */
type ApiKeyLike = {
  id: string;
  environment: Environment;
  name?: string;
  expires_at?: Date | null;
  redacted?: string;
  created_at?: Date;
  revoked_at?: Date | null;
  createdAt?: string;
};

/**
 * The audit snapshot of an API key (AUDIT-3): id, environment, name, the redacted form (`sk_live_…abcd`), created,
 * revoked and end times. Takes a stored row (ApiKeyRow) or a created key (NewApiKey, whose `key` is never read).
 */
export function apiKeySnapshot(k: ApiKeyLike): AuditSnapshot {
  return redactSnapshot('api_key', {
    id: k.id,
    environment: k.environment,
    name: k.name ?? null,
    redactedKey: k.redacted ?? null,
    createdAt: k.created_at ?? k.createdAt ?? null,
    revokedAt: k.revoked_at ?? null,
    expiresAt: k.expires_at ?? null,
  })!;
}

/** A webhook endpoint as stored (EndpointRow) or as the API shows it (EndpointView); the secrets are never read. */
type EndpointLike = {
  id: string;
  url: string;
  description: string | null;
  disabled: boolean;
  environment?: Environment;
  event_types?: string[];
  eventTypes?: string[];
  disabled_reason?: string | null;
  disabledReason?: string | null;
};

/**
 * The audit snapshot of a webhook endpoint (AUDIT-3): id, environment (of a row), URL, description, event types and
 * whether it is disabled and why. Never its signing secrets, current or previous.
 */
export function webhookEndpointSnapshot(e: EndpointLike): AuditSnapshot {
  return redactSnapshot('webhook_endpoint', {
    id: e.id,
    environment: e.environment ?? null,
    url: e.url,
    description: e.description,
    eventTypes: e.event_types ?? e.eventTypes ?? [],
    disabled: e.disabled,
    disabledReason: e.disabled_reason ?? e.disabledReason ?? null,
  })!;
}

/** The audit snapshot of a member in one organization (AUDIT-3): id, e-mail, name and role; never a password hash. */
export function memberSnapshot(m: { id: string; email: string; name: string }, role: string): AuditSnapshot {
  return redactSnapshot('member', { memberId: m.id, email: m.email, name: m.name, role })!;
}

/** The audit snapshot of an invitation (AUDIT-3): id, e-mail, role and expiry; never its token or link. */
export function invitationSnapshot(i: { id: string; email: string; role: string; expiresAt: Date }): AuditSnapshot {
  return redactSnapshot('invitation', { id: i.id, email: i.email, role: i.role, expiresAt: i.expiresAt })!;
}

/** The audit snapshot of a tenant's retail price (AUDIT-3), in cents: set, in effect, floor, and enabled. */
export function priceSnapshot(
  p: {
    type: string;
    retailCents: number | null;
    effectiveRetailCents: number;
    wholesaleCents: number;
    enabled: boolean;
  },
  environment: Environment,
): AuditSnapshot {
  return redactSnapshot('price', {
    type: p.type,
    environment,
    retailCents: p.retailCents,
    effectiveRetailCents: p.effectiveRetailCents,
    wholesaleCents: p.wholesaleCents,
    enabled: p.enabled,
  })!;
}

/** The audit snapshot of an organization's wholesale price of one product (AUDIT-3), in cents. */
export function wholesalePriceSnapshot(w: {
  type: string;
  wholesaleCents: number;
  defaultWholesaleCents: number;
  overridden: boolean;
}): AuditSnapshot {
  return redactSnapshot('wholesale_price', w)!;
}

/** The organization columns the settings snapshots read. */
interface OrganizationSettingsLike {
  branding: { logoUrl?: string | null; primaryColor?: string | null; accentColor?: string | null };
  white_label_domain: string | null;
  white_label_domain_verified_at: Date | null;
  white_label_domain_vouched: boolean;
  dashboard_billing: string;
  email_notifications: boolean;
  contact_email: string | null;
  low_balance_threshold_cents: number | string | null;
}

/**
 * The audit snapshots of an organization's settings (AUDIT-3), one per kind: branding (logo URL, colours), domain
 * (the domain, pending or verified, when, vouched by an operator; never its challenge token) and billing settings
 * (who pays dashboard orders, e-mail notifications, technical contact, the low-balance threshold in cents).
 */
export function settingsSnapshots(
  o: OrganizationSettingsLike,
): Record<'branding' | 'domain' | 'billing_settings', AuditSnapshot> {
  return {
    branding: redactSnapshot('branding', {
      logoUrl: o.branding.logoUrl ?? null,
      primaryColor: o.branding.primaryColor ?? null,
      accentColor: o.branding.accentColor ?? null,
    })!,
    domain: redactSnapshot('domain', {
      whiteLabelDomain: o.white_label_domain,
      status: o.white_label_domain ? (o.white_label_domain_verified_at ? 'verified' : 'pending') : null,
      verifiedAt: o.white_label_domain_verified_at,
      vouched: o.white_label_domain_vouched,
    })!,
    billing_settings: redactSnapshot('billing_settings', {
      dashboardBilling: o.dashboard_billing,
      emailNotifications: o.email_notifications,
      contactEmail: o.contact_email,
      lowBalanceThresholdCents: o.low_balance_threshold_cents === null ? null : Number(o.low_balance_threshold_cents),
    })!,
  };
}
