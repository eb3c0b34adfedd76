import os from 'node:os';
import type { FastifyRequest } from 'fastify';
import type { Environment } from '../../context.js';
import { csvText } from '../../lib/csv.js';
import type { Db } from '../../lib/db.js';
import { ValidationError } from '../../lib/errors.js';
import { newId } from '../../lib/ids.js';
import { cursor, dateRange, type FieldProblems, oneOf, param, type Query } from '../../lib/list-filters.js';
import { type AuditSnapshot, type AuditTargetKind, redactSnapshot } from './audit-redaction.js';
import * as repo from './audit.repo.js';

/** Every action the audit log records (AUDIT-1): `<target kind>.<verb>`. */
const AUDIT_ACTIONS = [
  'api_key.created',
  'api_key.revoked',
  'api_key.rolled',
  'webhook_endpoint.created',
  'webhook_endpoint.updated',
  'webhook_endpoint.deleted',
  'webhook_endpoint.secret_rotated',
  'member.added',
  'member.removed',
  'member.role_changed',
  'invitation.created',
  'price.updated',
  'price.reverted',
  'wholesale_price.updated',
  'wholesale_price.removed',
  'branding.updated',
  'domain.updated',
  'domain.verified',
  'billing_settings.updated',
  'auto_recharge.updated',
] as const satisfies readonly `${AuditTargetKind}.${string}`[];

/** An action of the audit log. */
type AuditAction = (typeof AUDIT_ACTIONS)[number];

/**
 * Who made a change (AUDIT-1): a portal member or a console operator (id and e-mail address), the holder of the
 * operator token of the admin API, or the CLI (the operating-system user as its name). `address` is the request's
 * client address (request.ip, SEC-8); null for the CLI.
 */
export interface AuditActor {
  kind: 'member' | 'operator' | 'operator-token' | 'cli';
  id: string | null;
  label: string | null;
  address: string | null;
}

/** One change to record. `environment` null for what the organization has once (members, branding, domain). */
export interface AuditEntry {
  actor: AuditActor;
  organizationId: string;
  environment: Environment | null;
  action: AuditAction;
  targetId: string | null;
  /** The target before the change (null for a creation), as a snapshot helper of audit-redaction.ts gives it. */
  before: Record<string, unknown> | null;
  /** The target after the change (null for a removal). */
  after: Record<string, unknown> | null;
}

/**
 * Records one change in the audit log (AUDIT-1 to AUDIT-4). Call it with the transaction client of the change, so the
 * entry commits or rolls back with it (AUDIT-2). Both snapshots are cut to the allow-list of the action's target kind
 * whatever they hold (AUDIT-3), so passing a whole row never leaks a secret.
 * @throws the database's error (the caller's transaction then fails as a whole).
 */
export async function recordAudit(db: Db, entry: AuditEntry): Promise<void> {
  const kind = entry.action.slice(0, entry.action.indexOf('.')) as AuditTargetKind;
  await repo.insertAuditEntry(db, {
    id: newId('auditEntry'),
    organizationId: entry.organizationId,
    environment: entry.environment,
    actorKind: entry.actor.kind,
    actorId: entry.actor.kind === 'member' || entry.actor.kind === 'operator' ? entry.actor.id : null,
    actorLabel: entry.actor.label?.slice(0, 320) ?? null,
    clientAddress: entry.actor.kind === 'cli' ? null : (entry.actor.address?.slice(0, 100) ?? null),
    action: entry.action,
    targetId: entry.targetId,
    before: redactSnapshot(kind, entry.before),
    after: redactSnapshot(kind, entry.after),
  });
}

/**
 * Records a change unless it changed nothing the audit log keeps (AUDIT-5: equal snapshots are no change), so saving
 * a form unchanged leaves no entry. @throws as {@link recordAudit}.
 */
export async function recordAuditChange(db: Db, entry: AuditEntry): Promise<void> {
  const kind = entry.action.slice(0, entry.action.indexOf('.')) as AuditTargetKind;
  const same = JSON.stringify(redactSnapshot(kind, entry.before)) === JSON.stringify(redactSnapshot(kind, entry.after));
  if (!same) await recordAudit(db, entry);
}

/** The actor of an admin API request (AUDIT-1): the operator token, from the request's client address. */
export function operatorTokenActor(request: FastifyRequest): AuditActor {
  return { kind: 'operator-token', id: null, label: null, address: request.ip };
}

/** The actor of a CLI command (AUDIT-1): the operating-system user who ran it, no address. */
export function cliActor(): AuditActor {
  let user: string | null = null;
  try {
    user = os.userInfo().username;
  } catch {
    // No passwd entry for the uid (some containers): the name stays unknown.
  }
  return { kind: 'cli', id: null, label: user, address: null };
}

/** Rows per page of the audit log's pages (LIM-5's default page of 50); the CSV reads this many at a time. */
const PAGE_SIZE = 50;

/** The audit log's filters as a page's query gives them: `action`, `actor`, days `from`/`to`, `organizationId`. */
export interface AuditQueryFilter {
  action?: AuditAction;
  actor: string;
  from?: string;
  to?: string;
  organizationId: string;
}

/**
 * Reads the audit log's filters from a query (AUDIT-6, AUDIT-7): an action of {@link AUDIT_ACTIONS}, an actor (id,
 * e-mail address or name), UTC days and, for the console, an organization id. A bad value is named in `problems` and
 * not applied.
 */
function auditFilterOf(query: Query): { filter: AuditQueryFilter; problems: FieldProblems } {
  const problems: FieldProblems = {};
  const filter = {
    action: oneOf(query, 'action', AUDIT_ACTIONS, problems),
    actor: param(query, 'actor'),
    organizationId: param(query, 'organizationId'),
    ...dateRange(query, problems),
  };
  return { filter, problems };
}

/**
 * One page of the audit log, newest first, 50 to a page with a keyset cursor (AUDIT-6, AUDIT-7), of one organization
 * (`organizationId`, the portal's: never another's entries) or of every organization (null, the console's, where the
 * query's organizationId filters).
 */
export async function auditPageView(db: Db, organizationId: string | null, query: Query) {
  const { filter, problems } = auditFilterOf(query);
  const after = cursor(query, 'auditEntry');
  const rows = await repo.listAuditPage(db, toRepoFilter(organizationId, filter, PAGE_SIZE, after));
  return {
    filter,
    problems,
    entries: rows.slice(0, PAGE_SIZE),
    next: rows.length > PAGE_SIZE ? rows[PAGE_SIZE - 1]!.id : null,
    paged: after !== undefined,
    actions: AUDIT_ACTIONS,
  };
}

function toRepoFilter(
  organizationId: string | null,
  f: AuditQueryFilter,
  limit: number,
  afterId: string | undefined,
): repo.AuditFilter {
  return {
    organizationId: organizationId ?? (f.organizationId || undefined),
    action: f.action,
    actor: f.actor || undefined,
    from: f.from,
    to: f.to,
    afterId,
    limit,
  };
}

/**
 * Every entry of a filter (not one page), in the page's order, read 50 at a time (AUDIT-8): the rows of the CSV
 * export. `organizationId` as for {@link auditPageView}.
 */
async function* auditEntriesOf(
  db: Db,
  organizationId: string | null,
  filter: AuditQueryFilter,
): AsyncGenerator<repo.AuditRow> {
  let afterId: string | undefined;
  for (;;) {
    const rows = await repo.listAuditPage(db, toRepoFilter(organizationId, filter, PAGE_SIZE, afterId));
    yield* rows.slice(0, PAGE_SIZE);
    if (rows.length <= PAGE_SIZE) return;
    afterId = rows[PAGE_SIZE - 1]!.id;
  }
}

/**
 * The CSV export of a filter (AUDIT-8): the header, then every entry as {@link auditCsvLine} writes it. `organizationId`
 * as for {@link auditPageView}. @throws ValidationError naming the first bad filter field (nothing is exported).
 */
export function auditCsvLines(db: Db, organizationId: string | null, query: Query): AsyncGenerator<string> {
  const { filter, problems } = auditFilterOf(query);
  const [first] = Object.entries(problems);
  if (first) throw new ValidationError([{ field: first[0], message: first[1] }]);
  return (async function* () {
    yield AUDIT_CSV_HEADER;
    for await (const entry of auditEntriesOf(db, organizationId, filter)) yield auditCsvLine(entry);
  })();
}

/** The header of the audit log's CSV export (AUDIT-8), in the order of {@link auditCsvLine}'s fields. */
const AUDIT_CSV_HEADER =
  'id,createdAt,organizationId,environment,actorKind,actorId,actor,clientAddress,action,targetId,before,after\r\n';

/**
 * An entry as one CSV line (AUDIT-8): RFC 4180 quoting, CRLF, the snapshots as JSON text; a text cell a spreadsheet
 * would run as a formula starts with an apostrophe.
 */
function auditCsvLine(e: repo.AuditRow): string {
  const json = (v: AuditSnapshot | null) => (v === null ? '' : csvText(JSON.stringify(v)));
  return `${[
    e.id,
    e.created_at.toISOString(),
    e.organization_id,
    e.environment ?? '',
    e.actor_kind,
    e.actor_id ?? '',
    csvText(e.actor_label),
    csvText(e.client_address),
    e.action,
    csvText(e.target_id),
    json(e.before),
    json(e.after),
  ].join(',')}\r\n`;
}
