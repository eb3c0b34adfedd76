import pg from 'pg';
import { ensureLoginRole, type LoginRole } from './login-role.js';

/** The default role whose rights the service's pools have (SEC-3; DATABASE_SERVICE_ROLE); created by migration 080. */
export const SERVICE_ROLE = 'fcs_service';

/**
 * Records that are only ever added to (BILL-13, 052, CAL-22, PAY-4, ORD-EIN-7, AUDIT-4): the service role may read and insert
 * them, nothing more. A payment's status changes are rows of payment_statuses.
 */
const APPEND_ONLY_TABLES = [
  'ledger_entries',
  'order_status_history',
  'events',
  'compliance_rule_changes',
  'company_calendar_override_changes',
  'payments',
  'payment_statuses',
  'payment_provider_events',
  'tax_id_reveals',
  'audit_log',
];
/** Rows that others refer to without a foreign key (ORD-18): never deleted, so the service role may not delete them. */
const NEVER_REMOVED_TABLES = ['companies', 'users', 'order_groups', 'orders'];
/** Tables the service only reads: the migrations' own record. */
const READ_ONLY_TABLES = ['schema_migrations'];

/**
 * Grants the service role what the running service needs, and nothing that changes the schema (SEC-3): rows of
 * every table of our schema and graphile-worker's (SELECT, INSERT, UPDATE, DELETE; on the append-only records SELECT
 * and INSERT only; no DELETE of the rows ORD-18 keeps forever), sequences and functions. `balances` only moves
 * through the ledger's functions (BILL-17), which run with the owner's rights: the service role may read it and
 * insert a row's key (a new balance is 0), nothing more. No TRUNCATE, no ownership, no CREATE. With `login`, first
 * creates the login role the pools connect as, or sets its password (see ensureLoginRole). Run as the owner after
 * every migration (ours and graphile-worker's), so tables added later get the grants too; idempotent.
 * @throws LoginRoleError when the login role is missing and the owner may not create it.
 */
export async function grantServiceRole(
  databaseUrl: string,
  login: LoginRole | null = null,
  serviceRole = SERVICE_ROLE,
): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const statements = await grantStatements(client, serviceRole);
    // One transaction: concurrent starts serialise on the catalog rows instead of failing with "tuple concurrently
    // updated".
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(727002)');
    if (login) await ensureLoginRole(client, login);
    for (const sql of statements) await client.query(sql);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await client.end();
  }
}

async function grantStatements(client: pg.Client, serviceRole: string): Promise<string[]> {
  const role = client.escapeIdentifier(serviceRole);
  const policy = `${serviceRole}_all`;
  const { rows } = await client.query<{ schema: string }>(
    `SELECT nspname AS schema FROM pg_namespace WHERE nspname IN ('public', 'graphile_worker')`,
  );
  const statements: string[] = [];
  for (const { schema } of rows) {
    const s = `"${schema}"`;
    statements.push(
      `GRANT USAGE ON SCHEMA ${s} TO ${role}`,
      `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${s} TO ${role}`,
      `GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA ${s} TO ${role}`,
      `GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${s} TO ${role}`,
    );
  }
  statements.push(
    `REVOKE UPDATE, DELETE, TRUNCATE ON ${APPEND_ONLY_TABLES.join(', ')} FROM ${role}`,
    `REVOKE DELETE, TRUNCATE ON ${NEVER_REMOVED_TABLES.join(', ')} FROM ${role}`,
    `REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ${READ_ONLY_TABLES.join(', ')} FROM ${role}`,
    // BILL-13, BILL-17: revoking INSERT on the table drops column grants too, so the key columns are granted after.
    `REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON balances FROM ${role}`,
    `GRANT INSERT (organization_id, environment) ON balances TO ${role}`,
  );
  // graphile-worker turns row-level security on for its private tables (only their owner passes); its functions
  // run with the caller's rights, so the service role gets a policy that lets it through on each of them.
  const { rows: secured } = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'graphile_worker' AND c.relkind = 'r' AND c.relrowsecurity
        AND NOT EXISTS (SELECT 1 FROM pg_policies p WHERE p.schemaname = 'graphile_worker' AND p.tablename = c.relname
                          AND p.policyname = $1)`,
    [policy],
  );
  for (const { name } of secured) {
    statements.push(
      `CREATE POLICY ${client.escapeIdentifier(policy)} ON graphile_worker."${name}" TO ${role} USING (true) WITH CHECK (true)`,
    );
  }
  return statements;
}
