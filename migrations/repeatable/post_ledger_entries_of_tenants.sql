-- post_ledger_entries_of_tenants(p_postings): THE way entries are appended to tenants' ledgers (BILL-17), for one
-- tenant (post_ledger_entries) or several at once (a placement statement of several tenants, ORD-40).
-- p_postings: a JSON array of objects {organization_id, environment, min_balance_cents, entries}, at most one per
-- tenant, read by name; `entries` is post_ledger_entries' array of {type, amount_cents, line_type, description,
-- order_id, reverses_entry_id, created_by, reference} (amounts in signed cents, other keys ignored, a missing one null).
--
-- Locks the postings' balance rows in the order of (organization_id, environment), whatever the order of p_postings, so
-- two postings of several tenants running at once can make each other wait, never deadlock (a missing row is created
-- at 0 first). Unless a posting's min_balance_cents is null, checks that its balance is at least that many cents; when
-- one is not, writes NOTHING for any tenant and returns one row per short tenant whose id is NULL (balance_before = its
-- balance). Otherwise moves each balance by the sum of its entries and appends them in the order given, with ids
-- sorting after the tenant's newest entry (ids_after) and each balance_after_cents the tenant's running sum, and
-- returns the written entries, each with its tenant's balance before the posting.
--
-- It runs with its owner's rights (SEC-3: the service role may not update `balances`), with a fixed search_path, and
-- only the service role may call it. Planned once per connection (generic plans, ORD-13), without JIT compilation, as
-- place_order_groups_of_tenants.
CREATE OR REPLACE FUNCTION post_ledger_entries_of_tenants(p_postings jsonb)
RETURNS TABLE (id text, organization_id text, environment text, type text, amount_cents bigint,
               balance_after_cents bigint, line_type text, description text, order_id text, reverses_entry_id text,
               created_by text, created_at timestamptz, balance_before bigint)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET plan_cache_mode = force_generic_plan SET jit = off
SET search_path = public, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  v_locked bigint;
  v_short bigint;
BEGIN
  SELECT count(*), count(*) FILTER (WHERE l.balance_cents < l.min_balance_cents) INTO v_locked, v_short FROM (
    SELECT b.balance_cents, t.min_balance_cents FROM balances b
      JOIN jsonb_to_recordset(p_postings) AS t(organization_id text, environment text, min_balance_cents bigint)
        ON b.organization_id = t.organization_id AND b.environment = t.environment
     ORDER BY b.organization_id, b.environment
       FOR UPDATE OF b) l;
  IF v_locked < jsonb_array_length(p_postings) THEN
    INSERT INTO balances (organization_id, environment)
    SELECT t.organization_id, t.environment FROM jsonb_to_recordset(p_postings) AS t(organization_id text, environment text)
     ORDER BY t.organization_id, t.environment
    ON CONFLICT DO NOTHING;
    SELECT count(*) FILTER (WHERE l.balance_cents < l.min_balance_cents) INTO v_short FROM (
      SELECT b.balance_cents, t.min_balance_cents FROM balances b
        JOIN jsonb_to_recordset(p_postings) AS t(organization_id text, environment text, min_balance_cents bigint)
          ON b.organization_id = t.organization_id AND b.environment = t.environment
       ORDER BY b.organization_id, b.environment
         FOR UPDATE OF b) l;
  END IF;
  IF v_short > 0 THEN
    RETURN QUERY
      SELECT NULL::text, t.organization_id, t.environment, NULL::text, NULL::bigint, NULL::bigint, NULL::text,
             NULL::text, NULL::text, NULL::text, NULL::text, NULL::timestamptz, b.balance_cents
        FROM jsonb_to_recordset(p_postings) AS t(organization_id text, environment text, min_balance_cents bigint)
        JOIN balances b ON b.organization_id = t.organization_id AND b.environment = t.environment
       WHERE b.balance_cents < t.min_balance_cents
       ORDER BY t.organization_id, t.environment;
    RETURN;
  END IF;
  RETURN QUERY
    WITH posting AS MATERIALIZED (
      SELECT t.organization_id, t.environment, t.entries, b.balance_cents AS balance_before,
             ids_after('txn', b.last_entry_id, jsonb_array_length(t.entries)) AS ids
        FROM jsonb_to_recordset(p_postings) AS t(organization_id text, environment text, entries jsonb)
        JOIN balances b ON b.organization_id = t.organization_id AND b.environment = t.environment
       WHERE jsonb_array_length(t.entries) > 0
    ), l AS MATERIALIZED (
      SELECT p.organization_id, p.environment, p.balance_before, p.ids[l.i] AS id, l.*,
             p.balance_before + sum(l.amount_cents) OVER (PARTITION BY p.organization_id, p.environment ORDER BY l.i)
               AS balance_after_cents
        FROM posting p
       CROSS JOIN LATERAL ROWS FROM (jsonb_to_recordset(p.entries)
                            AS (type text, amount_cents bigint, line_type text, description text, order_id text,
                                reverses_entry_id text, created_by text, reference text))
             WITH ORDINALITY
               AS l(type, amount_cents, line_type, description, order_id, reverses_entry_id, created_by, reference, i)
    ), moved AS (
      UPDATE balances b
         SET balance_cents = b.balance_cents + m.total, last_entry_id = m.last_entry_id, updated_at = now()
        FROM (SELECT p.organization_id, p.environment, p.ids[cardinality(p.ids)] AS last_entry_id,
                     (SELECT sum(l.amount_cents) FROM l
                       WHERE l.organization_id = p.organization_id AND l.environment = p.environment) AS total
                FROM posting p) m
       WHERE b.organization_id = m.organization_id AND b.environment = m.environment
    ), written AS (
      INSERT INTO ledger_entries AS le (id, organization_id, environment, type, amount_cents, balance_after_cents,
                                        line_type, description, order_id, reverses_entry_id, created_by, reference)
      SELECT l.id, l.organization_id, l.environment, l.type, l.amount_cents, l.balance_after_cents, l.line_type,
             l.description, l.order_id, l.reverses_entry_id, l.created_by, l.reference
        FROM l
       ORDER BY l.organization_id, l.environment, l.i
      RETURNING le.id, le.organization_id, le.environment, le.type, le.amount_cents, le.balance_after_cents,
                le.line_type, le.description, le.order_id, le.reverses_entry_id, le.created_by, le.created_at
    )
    SELECT w.*, l.balance_before FROM written w JOIN l ON l.id = w.id ORDER BY l.organization_id, l.environment, l.i;
END
$$;
REVOKE EXECUTE ON FUNCTION post_ledger_entries_of_tenants(jsonb) FROM PUBLIC;
