import type pg from 'pg';

/*
 * The schema of a database as one text (migrations/schema.sql): every table of `public` with its columns, constraints,
 * indexes, triggers, policies, comments and grants, the sequences, views and types, and every function's whole
 * definition. It is read from the catalog with the server's own deparsing functions (pg_get_constraintdef,
 * pg_get_indexdef, pg_get_triggerdef, pg_get_functiondef), not with pg_dump: the suite runs against PostgreSQL 15 and
 * 18, a pg_dump refuses a server newer than itself, the embedded server ships none, and pg_dump's text differs between
 * versions where the schema does not (18 dumps named NOT NULL constraints). What a version adds on its own (18's
 * NOT NULL rows in pg_constraint, 17's MAINTAIN right of an owner) is left out, so both give the same text.
 *
 * Everything is ordered by name in the "C" collation (the servers' default collations may differ), columns by their
 * position. Owners are not named (they are whoever ran the migrations) unless an object's owner differs from
 * schema_migrations'; rights the owner holds by owning are left out.
 */

/** The header of migrations/schema.sql: what it is and how it is made. */
const SNAPSHOT_HEADER = [
  '-- The schema of a freshly migrated database: what the numbered migrations and then migrations/repeatable/ make,',
  '-- read from its catalog (src/lib/schema-snapshot.ts). Written by `npm run db:snapshot`; do not edit it by hand.',
  '-- test/schema-snapshot.test.ts fails when a freshly migrated database differs from it.',
  '',
].join('\n');

const PUBLIC = `'public'::regnamespace`;
const C = 'COLLATE "C"';
/** Privileges in the order GRANT lists them. */
const PRIVILEGE_ORDER = `ARRAY['SELECT','INSERT','UPDATE','DELETE','TRUNCATE','REFERENCES','TRIGGER','MAINTAIN','EXECUTE','USAGE','CREATE']`;

interface Grant {
  object: string;
  grantee: string;
  privileges: string;
  grantable: boolean;
}

/**
 * The schema of the database `client` is connected to, as the text of migrations/schema.sql (header included).
 * Runs read-only catalog queries in a transaction of its own (search_path fixed to `public` while it deparses).
 */
export async function schemaSnapshot(client: pg.ClientBase): Promise<string> {
  await client.query('BEGIN READ ONLY');
  try {
    await client.query(`SET LOCAL search_path = public`);
    const text = await snapshotText(client);
    await client.query('COMMIT');
    return text;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

async function snapshotText(client: pg.ClientBase): Promise<string> {
  const q = async <T extends pg.QueryResultRow>(sql: string): Promise<T[]> => (await client.query<T>(sql)).rows;
  const [{ owner }] = await q<{ owner: string }>(
    `SELECT quote_ident(coalesce((SELECT tableowner FROM pg_tables
                                  WHERE schemaname = 'public' AND tablename = 'schema_migrations'),
                                current_user::text)) AS owner`,
  );
  const out: string[] = [SNAPSHOT_HEADER];
  const section = (lines: string[]) => {
    if (lines.length) out.push(`${lines.join('\n')}\n`);
  };
  const ownedBy = (kind: string, name: string, objectOwner: string) =>
    objectOwner === owner ? [] : [`ALTER ${kind} ${name} OWNER TO ${objectOwner};`];

  const extensions = await q<{ name: string }>(
    `SELECT quote_ident(extname) AS name FROM pg_extension WHERE extname <> 'plpgsql' ORDER BY extname ${C}`,
  );
  section(extensions.map((e) => `CREATE EXTENSION ${e.name};`));

  const schemaGrants = await q<Grant>(
    grantsSql(`SELECT 'SCHEMA public', nspacl, nspowner FROM pg_namespace WHERE oid = ${PUBLIC}`),
  );
  section(schemaGrants.map(grantLine));

  section(await typesSection(q));

  const tables = await q<{
    oid: number;
    name: string;
    unlogged: boolean;
    rls: boolean;
    force_rls: boolean;
    options: string | null;
    table_owner: string;
    comment: string | null;
  }>(
    `SELECT c.oid, quote_ident(c.relname) AS name, c.relpersistence = 'u' AS unlogged, c.relrowsecurity AS rls,
            c.relforcerowsecurity AS force_rls, array_to_string(c.reloptions, ', ') AS options,
            quote_ident(pg_get_userbyid(c.relowner)) AS table_owner, obj_description(c.oid, 'pg_class') AS comment
       FROM pg_class c
      WHERE c.relnamespace = ${PUBLIC} AND c.relkind IN ('r', 'p')
      ORDER BY c.relname ${C}`,
  );
  const columns = groupBy(
    await q<{
      table: number;
      name: string;
      type: string;
      not_null: boolean;
      identity: string;
      generated: string;
      default: string | null;
      collation: string | null;
      comment: string | null;
    }>(
      `SELECT a.attrelid AS table, quote_ident(a.attname) AS name, format_type(a.atttypid, a.atttypmod) AS type,
              a.attnotnull AS not_null, a.attidentity AS identity, a.attgenerated AS generated,
              pg_get_expr(d.adbin, d.adrelid) AS default,
              CASE WHEN a.attcollation <> t.typcollation THEN (SELECT quote_ident(collname) FROM pg_collation
                                                               WHERE oid = a.attcollation) END AS collation,
              col_description(a.attrelid, a.attnum) AS comment
         FROM pg_attribute a
         JOIN pg_class c ON c.oid = a.attrelid
         JOIN pg_type t ON t.oid = a.atttypid
         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE c.relnamespace = ${PUBLIC} AND c.relkind IN ('r', 'p', 'v', 'm', 'c') AND a.attnum > 0
          AND NOT a.attisdropped
        ORDER BY a.attrelid, a.attnum`,
    ),
  );
  const constraints = groupBy(
    await q<{ table: number; name: string; def: string }>(
      // contype 'n': PostgreSQL 18 keeps NOT NULL as constraints too (the columns say NOT NULL already); 't': a
      // constraint trigger's entry (the trigger is listed with the others).
      `SELECT conrelid AS table, quote_ident(conname) AS name, pg_get_constraintdef(oid) AS def
         FROM pg_constraint
        WHERE connamespace = ${PUBLIC} AND conrelid <> 0 AND contype NOT IN ('n', 't')
        ORDER BY conname ${C}`,
    ),
  );
  const indexes = groupBy(
    await q<{ table: number; def: string }>(
      // Indexes of primary keys, unique and exclusion constraints come with their constraint.
      `SELECT i.indrelid AS table, pg_get_indexdef(i.indexrelid) AS def
         FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
        WHERE ic.relnamespace = ${PUBLIC}
          AND NOT EXISTS (SELECT 1 FROM pg_constraint k
                           WHERE k.conindid = i.indexrelid AND k.conrelid = i.indrelid AND k.contype IN ('p', 'u', 'x'))
        ORDER BY ic.relname ${C}`,
    ),
  );
  const triggers = groupBy(
    await q<{ table: number; def: string }>(
      `SELECT t.tgrelid AS table, pg_get_triggerdef(t.oid) AS def
         FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        WHERE c.relnamespace = ${PUBLIC} AND NOT t.tgisinternal
        ORDER BY t.tgname ${C}`,
    ),
  );
  const policies = groupBy(
    await q<{ table: number; line: string }>(
      `SELECT c.oid AS table,
              format('CREATE POLICY %I ON public.%I AS %s FOR %s TO %s%s%s;', p.policyname, p.tablename, p.permissive,
                     p.cmd, array_to_string(p.roles, ', '), ' USING (' || p.qual || ')',
                     ' WITH CHECK (' || p.with_check || ')') AS line
         FROM pg_policies p JOIN pg_class c ON c.relname = p.tablename AND c.relnamespace = ${PUBLIC}
        WHERE p.schemaname = 'public'
        ORDER BY p.policyname ${C}`,
    ),
  );
  const tableGrants = groupBy(
    await q<Grant & { table: number }>(
      grantsSql(
        `SELECT 'TABLE public.' || quote_ident(relname), relacl, relowner, oid FROM pg_class
          WHERE relnamespace = ${PUBLIC} AND relkind IN ('r', 'p', 'v', 'm')`,
        true,
      ),
    ),
  );
  const columnGrants = groupBy(
    await q<Grant & { table: number }>(
      `SELECT x.table, x.privileges, x.object, x.grantee, x.grantable
         FROM (SELECT a.attrelid AS table, a.attnum, g.privilege_type,
                      g.privilege_type || ' (' || quote_ident(a.attname) || ')' AS privileges,
                      'TABLE public.' || quote_ident(c.relname) AS object,
                      CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END AS grantee,
                      g.is_grantable AS grantable
                 FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid, aclexplode(a.attacl) g
                WHERE c.relnamespace = ${PUBLIC} AND a.attacl IS NOT NULL AND g.grantee <> c.relowner) x
        ORDER BY x.grantee ${C}, x.attnum, x.privilege_type ${C}`,
    ),
  );

  for (const t of tables) {
    const lines: string[] = [];
    const cols = (columns.get(t.oid) ?? []).map((c) => {
      let line = `    ${c.name} ${c.type}`;
      if (c.collation) line += ` COLLATE ${c.collation}`;
      if (c.identity) line += ` GENERATED ${c.identity === 'a' ? 'ALWAYS' : 'BY DEFAULT'} AS IDENTITY`;
      else if (c.generated) line += ` GENERATED ALWAYS AS (${c.default}) STORED`;
      else if (c.default !== null) line += ` DEFAULT ${c.default}`;
      if (c.not_null) line += ' NOT NULL';
      return line;
    });
    const name = `public.${t.name}`;
    lines.push(`CREATE ${t.unlogged ? 'UNLOGGED ' : ''}TABLE ${name} (`, cols.join(',\n'), ');');
    if (t.options) lines.push(`ALTER TABLE ${name} SET (${t.options});`);
    lines.push(...ownedBy('TABLE', name, t.table_owner));
    for (const k of constraints.get(t.oid) ?? []) lines.push(`ALTER TABLE ${name} ADD CONSTRAINT ${k.name} ${k.def};`);
    for (const i of indexes.get(t.oid) ?? []) lines.push(`${i.def};`);
    for (const g of triggers.get(t.oid) ?? []) lines.push(`${g.def};`);
    if (t.rls) lines.push(`ALTER TABLE ${name} ENABLE ROW LEVEL SECURITY;`);
    if (t.force_rls) lines.push(`ALTER TABLE ${name} FORCE ROW LEVEL SECURITY;`);
    for (const p of policies.get(t.oid) ?? []) lines.push(p.line);
    if (t.comment !== null) lines.push(`COMMENT ON TABLE ${name} IS ${literal(t.comment)};`);
    for (const c of columns.get(t.oid) ?? [])
      if (c.comment !== null) lines.push(`COMMENT ON COLUMN ${name}.${c.name} IS ${literal(c.comment)};`);
    lines.push(...(tableGrants.get(t.oid) ?? []).map(grantLine), ...(columnGrants.get(t.oid) ?? []).map(grantLine));
    section(lines);
  }

  section(await sequencesSection(q, ownedBy));
  section(await viewsSection(q, columns, tableGrants, ownedBy));

  const functions = await q<{ def: string; signature: string; function_owner: string; comment: string | null }>(
    `SELECT pg_get_functiondef(p.oid) AS def, 'public.' || quote_ident(p.proname) || '(' ||
              pg_get_function_identity_arguments(p.oid) || ')' AS signature,
            quote_ident(pg_get_userbyid(p.proowner)) AS function_owner, obj_description(p.oid, 'pg_proc') AS comment
       FROM pg_proc p
      WHERE p.pronamespace = ${PUBLIC} AND p.prokind IN ('f', 'p')
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                                                    AND d.deptype = 'e')
      ORDER BY p.proname ${C}, pg_get_function_identity_arguments(p.oid) ${C}`,
  );
  const functionGrants = groupBy(
    await q<Grant & { table: string }>(
      grantsSql(
        `SELECT 'FUNCTION public.' || quote_ident(proname) || '(' || pg_get_function_identity_arguments(oid) || ')',
                coalesce(proacl, acldefault('f', proowner)), proowner,
                'public.' || quote_ident(proname) || '(' || pg_get_function_identity_arguments(oid) || ')'
           FROM pg_proc WHERE pronamespace = ${PUBLIC} AND prokind IN ('f', 'p')`,
        true,
      ),
    ),
  );
  for (const f of functions) {
    const kind = f.def.startsWith('CREATE OR REPLACE PROCEDURE') ? 'PROCEDURE' : 'FUNCTION';
    section([
      `${f.def.trimEnd()};`,
      ...ownedBy(kind, f.signature, f.function_owner),
      ...(f.comment !== null ? [`COMMENT ON ${kind} ${f.signature} IS ${literal(f.comment)};`] : []),
      ...(functionGrants.get(f.signature) ?? []).map(grantLine),
    ]);
  }
  return `${out.join('\n').trimEnd()}\n`;
}

/** Sequences not made for an identity column (those come with it), with their grants (identity ones' too). */
async function sequencesSection(
  q: <T extends pg.QueryResultRow>(sql: string) => Promise<T[]>,
  ownedBy: (kind: string, name: string, owner: string) => string[],
): Promise<string[]> {
  const sequences = await q<{
    name: string;
    identity: boolean;
    def: string;
    owned_by: string | null;
    sequence_owner: string;
  }>(
    `SELECT 'public.' || quote_ident(c.relname) AS name,
            EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                                                AND d.deptype = 'i') AS identity,
            format('AS %s START %s INCREMENT %s MINVALUE %s MAXVALUE %s CACHE %s%s', format_type(s.seqtypid, NULL),
                   s.seqstart, s.seqincrement, s.seqmin, s.seqmax, s.seqcache,
                   CASE WHEN s.seqcycle THEN ' CYCLE' ELSE '' END) AS def,
            (SELECT 'public.' || quote_ident(t.relname) || '.' || quote_ident(a.attname)
               FROM pg_depend d JOIN pg_class t ON t.oid = d.refobjid
               JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
              WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'a') AS owned_by,
            quote_ident(pg_get_userbyid(c.relowner)) AS sequence_owner
       FROM pg_class c JOIN pg_sequence s ON s.seqrelid = c.oid
      WHERE c.relnamespace = ${PUBLIC} AND c.relkind = 'S'
      ORDER BY c.relname ${C}`,
  );
  const grants = groupBy(
    await q<Grant & { table: string }>(
      grantsSql(
        `SELECT 'SEQUENCE public.' || quote_ident(relname), relacl, relowner, 'public.' || quote_ident(relname)
           FROM pg_class WHERE relnamespace = ${PUBLIC} AND relkind = 'S'`,
        true,
      ),
    ),
  );
  const lines: string[] = [];
  for (const s of sequences) {
    if (!s.identity) {
      lines.push(`CREATE SEQUENCE ${s.name} ${s.def};`);
      if (s.owned_by) lines.push(`ALTER SEQUENCE ${s.name} OWNED BY ${s.owned_by};`);
      lines.push(...ownedBy('SEQUENCE', s.name, s.sequence_owner));
    }
    lines.push(...(grants.get(s.name) ?? []).map(grantLine));
  }
  return lines;
}

/** Views and materialized views, as the server deparses them. */
async function viewsSection(
  q: <T extends pg.QueryResultRow>(sql: string) => Promise<T[]>,
  columns: Map<unknown, Array<{ name: string; comment: string | null }>>,
  grants: Map<unknown, Grant[]>,
  ownedBy: (kind: string, name: string, owner: string) => string[],
): Promise<string[]> {
  const views = await q<{ oid: number; name: string; materialized: boolean; def: string; view_owner: string }>(
    `SELECT c.oid, 'public.' || quote_ident(c.relname) AS name, c.relkind = 'm' AS materialized,
            pg_get_viewdef(c.oid, true) AS def, quote_ident(pg_get_userbyid(c.relowner)) AS view_owner
       FROM pg_class c WHERE c.relnamespace = ${PUBLIC} AND c.relkind IN ('v', 'm')
      ORDER BY c.relname ${C}`,
  );
  const lines: string[] = [];
  for (const v of views) {
    const kind = v.materialized ? 'MATERIALIZED VIEW' : 'VIEW';
    lines.push(`CREATE ${kind} ${v.name} AS`, `${v.def.trimEnd().replace(/;$/, '')};`);
    lines.push(...ownedBy(kind, v.name, v.view_owner));
    for (const c of columns.get(v.oid) ?? [])
      if (c.comment !== null) lines.push(`COMMENT ON COLUMN ${v.name}.${c.name} IS ${literal(c.comment)};`);
    lines.push(...(grants.get(v.oid) ?? []).map(grantLine));
  }
  return lines;
}

/** Enums, domains and composite types of `public` (a table's row type comes with its table). */
async function typesSection(q: <T extends pg.QueryResultRow>(sql: string) => Promise<T[]>): Promise<string[]> {
  const types = await q<{ line: string }>(
    `SELECT CASE t.typtype
              WHEN 'e' THEN format('CREATE TYPE public.%I AS ENUM (%s);', t.typname,
                                   (SELECT string_agg(quote_literal(e.enumlabel), ', ' ORDER BY e.enumsortorder)
                                      FROM pg_enum e WHERE e.enumtypid = t.oid))
              WHEN 'd' THEN format('CREATE DOMAIN public.%I AS %s%s%s;', t.typname,
                                   format_type(t.typbasetype, t.typtypmod),
                                   CASE WHEN t.typnotnull THEN ' NOT NULL' ELSE '' END,
                                   (SELECT coalesce(string_agg(' CONSTRAINT ' || quote_ident(k.conname) || ' ' ||
                                                               pg_get_constraintdef(k.oid), '' ORDER BY k.conname ${C}), '')
                                      FROM pg_constraint k WHERE k.contypid = t.oid AND k.contype <> 'n'))
              ELSE format('CREATE TYPE public.%I AS (%s);', t.typname,
                          (SELECT string_agg(quote_ident(a.attname) || ' ' || format_type(a.atttypid, a.atttypmod),
                                             ', ' ORDER BY a.attnum)
                             FROM pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped))
            END AS line
       FROM pg_type t LEFT JOIN pg_class c ON c.oid = t.typrelid
      WHERE t.typnamespace = ${PUBLIC}
        AND (t.typtype IN ('e', 'd') OR (t.typtype = 'c' AND c.relkind = 'c'))
      ORDER BY t.typname ${C}`,
  );
  return types.map((t) => t.line);
}

/**
 * A query of the grants in `source` (rows of: object name, acl, owner oid[, key]), one row per object and grantee
 * with its privileges in GRANT's order, the owner's own left out. `keyed`: the source's fourth column is returned as
 * `table`, to group the grants by.
 */
function grantsSql(source: string, keyed = false): string {
  return `SELECT ${keyed ? 'x.key AS table, ' : ''}x.object, x.grantee, x.grantable,
                 string_agg(x.privilege, ', ' ORDER BY array_position(${PRIVILEGE_ORDER}, x.privilege)) AS privileges
            FROM (SELECT ${keyed ? 's.key, ' : ''}s.object, g.privilege_type AS privilege, g.is_grantable AS grantable,
                         CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END AS grantee
                    FROM (${source}) AS s(object, acl, owner${keyed ? ', key' : ''}), aclexplode(s.acl) g
                   WHERE g.grantee <> s.owner) x
           GROUP BY ${keyed ? 'x.key, ' : ''}x.object, x.grantee, x.grantable
           ORDER BY x.object ${C}, x.grantee ${C}, x.grantable`;
}

function grantLine(g: Grant): string {
  return `GRANT ${g.privileges} ON ${g.object} TO ${g.grantee}${g.grantable ? ' WITH GRANT OPTION' : ''};`;
}

function groupBy<T extends { table: unknown }>(rows: T[]): Map<unknown, T[]> {
  const map = new Map<unknown, T[]>();
  for (const row of rows) {
    const list = map.get(row.table);
    if (list) list.push(row);
    else map.set(row.table, [row]);
  }
  return map;
}

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/**
 * A digest of the definitions of every function and trigger of `public` (pg_get_functiondef, pg_get_triggerdef; not
 * their grants, which every start sets again). Differs after anything adds, drops or changes one of them.
 */
export async function routinesFingerprint(client: pg.ClientBase): Promise<string> {
  const { rows } = await client.query<{ md5: string }>(
    `SELECT md5(coalesce(string_agg(d, E'\\n' ORDER BY d ${C}), '')) AS md5
       FROM (SELECT pg_get_functiondef(p.oid) AS d FROM pg_proc p
              WHERE p.pronamespace = ${PUBLIC} AND p.prokind IN ('f', 'p')
             UNION ALL
             SELECT pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
              WHERE c.relnamespace = ${PUBLIC} AND NOT t.tgisinternal) x`,
  );
  return rows[0]!.md5;
}
