import { many, type Db } from '../../lib/db.js';
import { isId } from '../../lib/ids.js';
import type { Environment } from '../../context.js';
import type { AuditSnapshot } from './audit-redaction.js';

/** A row of `audit_log` (migration 112), with the organization's name for the lists. */
export interface AuditRow {
  id: string;
  organization_id: string;
  organization_name: string;
  environment: Environment | null;
  actor_kind: 'member' | 'operator' | 'operator-token' | 'cli';
  actor_id: string | null;
  actor_label: string | null;
  client_address: string | null;
  action: string;
  target_id: string | null;
  before: AuditSnapshot | null;
  after: AuditSnapshot | null;
  created_at: Date;
}

/** What insertAuditEntry writes: the snapshots are already redacted (AUDIT-3). */
export interface AuditInsert {
  id: string;
  organizationId: string;
  environment: Environment | null;
  actorKind: AuditRow['actor_kind'];
  actorId: string | null;
  actorLabel: string | null;
  clientAddress: string | null;
  action: string;
  targetId: string | null;
  before: AuditSnapshot | null;
  after: AuditSnapshot | null;
}

/** Appends one entry (AUDIT-2: on the transaction client of the change it records). */
export async function insertAuditEntry(db: Db, e: AuditInsert): Promise<void> {
  await db.query(
    `INSERT INTO audit_log (id, organization_id, environment, actor_kind, actor_id, actor_label, client_address, action,
                            target_id, before, after)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      e.id,
      e.organizationId,
      e.environment,
      e.actorKind,
      e.actorId,
      e.actorLabel,
      e.clientAddress,
      e.action,
      e.targetId,
      e.before === null ? null : JSON.stringify(e.before),
      e.after === null ? null : JSON.stringify(e.after),
    ],
  );
}

/**
 * A page filter of the audit log. `organizationId` undefined: every organization (the console's list). `actor`: an
 * actor id (exact) or an e-mail address or name (case-insensitive). Days are UTC, both included. `afterId`: the last
 * entry of the previous page.
 */
export interface AuditFilter {
  organizationId?: string;
  action?: string;
  actor?: string;
  from?: string;
  to?: string;
  afterId?: string;
  limit: number;
}

/**
 * One keyset page of the audit log, newest first (by time, then id), with one row more than `limit` when a next page
 * exists (AUDIT-6, AUDIT-7). A cursor of another organization yields an empty page.
 */
export async function listAuditPage(db: Db, f: AuditFilter): Promise<AuditRow[]> {
  const params: unknown[] = [];
  const where: string[] = [];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replaceAll('?', `$${params.length}`));
  };
  if (f.organizationId) add('a.organization_id = ?', f.organizationId);
  if (f.action) add('a.action = ?', f.action);
  if (f.actor) {
    if (!f.actor.includes('@') && (isId('member', f.actor) || isId('operator', f.actor)))
      add('a.actor_id = ?', f.actor);
    else {
      // Entries are labelled with the actor's e-mail address: a name stands for the addresses of the members and
      // operators of that name. One label (the usual case) reads the (organization, lower(label)) index in order.
      const named = f.actor.includes('@') ? [] : await emailsOfName(db, f.actor);
      const labels = named.length ? named : [f.actor.toLowerCase()];
      if (labels.length === 1) add('lower(a.actor_label) = ?', labels[0]);
      else add('lower(a.actor_label) = ANY(?::text[])', labels);
    }
  }
  if (f.from) add(`a.created_at >= (?::date)::timestamp AT TIME ZONE 'UTC'`, f.from);
  if (f.to) add(`a.created_at < (?::date + 1)::timestamp AT TIME ZONE 'UTC'`, f.to);
  if (f.afterId) {
    const sameOrg = f.organizationId ? ` AND c.organization_id = $1` : '';
    add(`(a.created_at, a.id) < (SELECT c.created_at, c.id FROM audit_log c WHERE c.id = ?${sameOrg})`, f.afterId);
  }
  params.push(f.limit + 1);
  return many<AuditRow>(
    db,
    `SELECT a.*, o.name AS organization_name FROM audit_log a JOIN organizations o ON o.id = a.organization_id
      ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY a.created_at DESC, a.id DESC LIMIT $${params.length}`,
    params,
  );
}

/** The e-mail addresses (lower case) of the portal members and operators whose name is `name`, case-insensitive. */
async function emailsOfName(db: Db, name: string): Promise<string[]> {
  const rows = await many<{ email: string }>(
    db,
    `SELECT lower(email) AS email FROM members WHERE lower(name) = lower($1)
      UNION SELECT lower(email) FROM operators WHERE lower(name) = lower($1)`,
    [name],
  );
  return rows.map((r) => r.email);
}
