/** The roles a member has in an organization (PORTAL-2), most powerful first. */
export const ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;

/** A member's role in one organization. */
export type Role = (typeof ROLES)[number];

/**
 * What a portal page or form does. Reads and writes are named apart so that a viewer's refusal is decided by the
 * same table as everyone else's.
 */
export type PortalAction =
  | 'overview.read'
  | 'sessions.manage'
  | 'members.read'
  | 'members.invite'
  | 'members.remove'
  | 'keys.read'
  | 'keys.write'
  | 'webhooks.read'
  | 'webhooks.write'
  | 'events.read'
  | 'logs.read'
  | 'secrets.read'
  | 'billing.read'
  | 'billing.write'
  | 'prices.read'
  | 'prices.write'
  | 'orders.read'
  | 'companies.read'
  | 'users.read'
  | 'settings.read'
  | 'settings.write'
  | 'audit.read';

const EVERYONE: readonly Role[] = ROLES;
const MANAGERS: readonly Role[] = ['owner', 'admin'];
const BUILDERS: readonly Role[] = ['owner', 'admin', 'developer'];

/**
 * Who may do what (PORTAL-2): owners everything; admins everything but removing owners (decided on the target, see
 * {@link canManageMember}); developers keys, webhooks, events, logs and test mode, no billing, prices or members;
 * viewers read only, never a secret.
 */
const POLICY: Record<PortalAction, readonly Role[]> = {
  'overview.read': EVERYONE,
  'sessions.manage': EVERYONE,
  'members.read': MANAGERS,
  'members.invite': MANAGERS,
  'members.remove': MANAGERS,
  'keys.read': EVERYONE,
  'keys.write': BUILDERS,
  'webhooks.read': EVERYONE,
  'webhooks.write': BUILDERS,
  'events.read': EVERYONE,
  'logs.read': EVERYONE,
  'secrets.read': BUILDERS,
  'billing.read': MANAGERS,
  'billing.write': MANAGERS,
  'prices.read': MANAGERS,
  'prices.write': MANAGERS,
  'orders.read': EVERYONE,
  'companies.read': EVERYONE,
  'users.read': EVERYONE,
  'settings.read': EVERYONE,
  'settings.write': MANAGERS,
  // AUDIT-6: who changed what, from where, is for the organization's owners and admins.
  'audit.read': MANAGERS,
};

/** Whether `role` may do `action` (PORTAL-2). An unknown role may do nothing. */
export function can(role: Role | null | undefined, action: PortalAction): boolean {
  return role != null && (POLICY[action]?.includes(role) ?? false);
}

/**
 * Whether a member of role `actor` may invite someone as `invited`, or remove a member whose role is `invited`
 * (PORTAL-2): owners any role; admins any role but owner; nobody else.
 */
export function canManageMember(actor: Role | null | undefined, target: Role): boolean {
  if (actor === 'owner') return true;
  return actor === 'admin' && target !== 'owner';
}

/** Owners and admins must have a second factor before anything but enrolling one (PORTAL-5). */
export function needsSecondFactor(role: Role): boolean {
  return role === 'owner' || role === 'admin';
}

/** Whether `value` names a role (for input from forms, the admin API and the CLI). */
export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}
