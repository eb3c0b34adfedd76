import pg from 'pg';

/** The role the service's pools act as (SEC-3); created by migration 080. */
export const SERVICE_ROLE = 'fcs_service';

/**
 * Records that are only ever added to (BILL-13, 052, CAL-22, ORD-EIN-7): the service role may read and insert them,
 * nothing more.
 */
const APPEND_ONLY_TABLES = [
  'ledger_entries',
  'order_status_history',
  'events',
  'compliance_rule_changes',
  'tax_id_reveals',
];
/** Rows that others refer to without a foreign key (ORD-18): never deleted, so the service role may not delete them. */
const NEVER_REMOVED_TABLES = ['companies', 'users', 'order_groups', 'orders', 'balances'];

/**
 * Grants the service role what the running service needs, and nothing that changes the schema (SEC-3): rows of
 * every table of our schema and graphile-worker's (SELECT, INSERT, UPDATE, DELETE; on the append-only records
 * SELECT and INSERT only; no DELETE of the rows ORD-18 keeps forever), sequences and functions. No TRUNCATE, no
 * ownership, no CREATE. Run as the owner after every migration (ours and graphile-worker's), so tables added later
 * get the grants too; idempotent.
 */
export async function grantServiceRole(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ schema: string }>(
      `SELECT nspname AS schema FROM pg_namespace WHERE nspname IN ('public', 'graphile_worker')`,
    );
    const statements: string[] = [];
    for (const { schema } of rows) {
      const s = `"${schema}"`;
      statements.push(
        `GRANT USAGE ON SCHEMA ${s} TO ${SERVICE_ROLE}`,
        `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${s} TO ${SERVICE_ROLE}`,
        `GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA ${s} TO ${SERVICE_ROLE}`,
        `GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${s} TO ${SERVICE_ROLE}`,
      );
    }
    statements.push(`REVOKE UPDATE, DELETE, TRUNCATE ON ${APPEND_ONLY_TABLES.join(', ')} FROM ${SERVICE_ROLE}`);
    statements.push(`REVOKE DELETE, TRUNCATE ON ${NEVER_REMOVED_TABLES.join(', ')} FROM ${SERVICE_ROLE}`);
    // graphile-worker turns row-level security on for its private tables (only their owner passes); its functions
    // run with the caller's rights, so the service role gets a policy that lets it through on each of them.
    const { rows: secured } = await client.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'graphile_worker' AND c.relkind = 'r' AND c.relrowsecurity
          AND NOT EXISTS (SELECT 1 FROM pg_policies p WHERE p.schemaname = 'graphile_worker' AND p.tablename = c.relname AND p.policyname = '${SERVICE_ROLE}_all')`,
    );
    for (const { name } of secured) {
      statements.push(
        `CREATE POLICY ${SERVICE_ROLE}_all ON graphile_worker."${name}" TO ${SERVICE_ROLE} USING (true) WITH CHECK (true)`,
      );
    }
    // One transaction: concurrent starts serialise on the catalog rows instead of failing with "tuple concurrently
    // updated".
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(727002)');
    for (const sql of statements) await client.query(sql);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await client.end();
  }
}
