-- A placement wakes only what listens for it (OPS-6), and writes its company, admin link, group, orders and their
-- `submitted` history in one statement (ORD-13).
--
-- After each placement statement the service sent a wake-up (OPS-5) on the events channel, heard by every webhook
-- dispatcher and every process serving an event stream, whether or not the tenant had an endpoint to deliver to or a
-- stream open. A wake-up is a statement and a transaction of its own, and every listening connection on the database
-- is roused to read it; measured beside the placements of one busy tenant with neither (two service processes taking
-- turns on one database, `BENCH_ONLY`-style windows), placing without the wake-ups took about a sixth less CPU per
-- order on the 2-core development machine. Now the statement itself says whom its commit concerns:
--   * `deliveries`: it wrote webhook deliveries (an enabled endpoint of the tenant takes one of the event types
--     written), so the dispatchers are woken (DELIVERIES_DUE_CHANNEL);
--   * `streams`: an event stream of the tenant is open on some process (a row of `event_stream_tenants`, below), so
--     the event streams (and the dispatchers, which hear that channel too) are woken.
-- With neither, nothing is sent: nobody would read anything. Every other writer of events keeps signalling always.
--
-- `event_stream_tenants`: each process serving event streams keeps one row per tenant it streams, refreshed while
-- the streams stay open and deleted when the last one closes; a row not refreshed (its process is gone) lapses at
-- `expires_at`. UNLOGGED: after a crash of the database the rows are gone and the processes write them again at their
-- next refresh; a stream meanwhile still looks at every heartbeat, as after a lost wake-up.
--
-- The insertions of migration 097's five statements (companies, company admins, order groups, orders, history) are
-- one statement now, which also asks whom the commit concerns: each statement of a PL/pgSQL function starts and ends
-- the executor and takes its snapshot, and the rows of the groups and orders were unpacked from the JSON once per
-- table. Counted by `npm run bench:db-instructions`: the merge alone took 3.64 M PostgreSQL instructions to 3.55 M
-- for a statement of one placement and 1.98 M to 1.95 M per order at five placements per statement; with the two
-- look-ups of whom to wake, 3.63 M and 1.96 M. Same rows, same outcomes, same errors.
CREATE UNLOGGED TABLE event_stream_tenants (
  organization_id text NOT NULL,
  environment text NOT NULL,
  -- The process's stream hub (host:pid:random), so that processes streaming one tenant keep a row each.
  hub_id text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, environment, hub_id)
);

-- place_order_groups_v2(p): as in migration 097; the returned object also says whether the statement wrote webhook
-- deliveries (`deliveries`) and whether the tenant has an event stream open (`streams`), both false when nothing was
-- placed.
CREATE OR REPLACE FUNCTION place_order_groups_v2(p jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_org text := p ->> 'organization_id';
  v_env text := p ->> 'environment';
  v_outcomes jsonb;
  v_placed int[];
  v_min bigint;
  v_events jsonb;
  v_debits jsonb;
  v_before bigint;
  v_deliveries boolean;
  v_streams boolean;
BEGIN
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(p -> 'groups') AS g(r) WHERE g.r ->> 9 IS NOT NULL) THEN
    UPDATE order_groups g SET idempotency_key = NULL
     WHERE g.organization_id = v_org AND g.environment = v_env
       AND g.idempotency_key IN (SELECT x.r ->> 9 FROM jsonb_array_elements(p -> 'groups') AS x(r))
       AND g.created_at < now() - make_interval(hours => (p ->> 'idempotency_key_ttl_hours')::int);
  END IF;
  WITH grp AS MATERIALIZED (
    SELECT g.n::int AS n, g.r FROM jsonb_array_elements(p -> 'groups') WITH ORDINALITY AS g(r, n)
  ), checked AS (
    SELECT g.n, g.r, g.r ->> 2 AS company_id, (g.r ->> 3)::boolean AS forms,
           CASE
             WHEN NOT EXISTS (SELECT 1 FROM users u
                               WHERE u.id = g.r ->> 1 AND u.organization_id = v_org AND u.environment = v_env)
               THEN 'unknown_user'
             WHEN g.r ->> 9 IS NOT NULL
                  AND EXISTS (SELECT 1 FROM order_groups o
                               WHERE o.organization_id = v_org AND o.environment = v_env
                                 AND o.idempotency_key = g.r ->> 9)
               THEN 'earlier'
           END AS refused
      FROM grp g
  ), formed AS (
    INSERT INTO companies (id, organization_id, environment, slug, legal_name, trade_name, ein, entity_type,
                           structure_type, tax_election, fiscal_end_month, formation_date, formation_state,
                           principal_address, mailing_address, officers)
    SELECT c.r ->> 1, v_org, v_env, c.r ->> 2, c.r ->> 3, c.r ->> 4, c.r ->> 5, c.r ->> 6, c.r ->> 7, c.r ->> 8,
           c.r ->> 9, (c.r ->> 10)::date, c.r ->> 11, nullif(c.r -> 12, 'null'), nullif(c.r -> 13, 'null'),
           nullif(c.r -> 14, 'null')
      FROM jsonb_array_elements(p -> 'companies') AS c(r)
      JOIN checked k ON k.n = (c.r ->> 0)::int AND k.refused IS NULL
     ORDER BY k.n
    ON CONFLICT ON CONSTRAINT companies_slug_unique DO NOTHING
    RETURNING companies.id
  ), outcome AS MATERIALIZED (
    SELECT k.n, k.r,
           coalesce(k.refused,
                    CASE WHEN k.forms AND NOT EXISTS (SELECT 1 FROM formed f WHERE f.id = k.company_id)
                         THEN 'slug_taken' ELSE 'placed' END) AS outcome
      FROM checked k
  ), placed AS MATERIALIZED (
    SELECT o.n, o.r FROM outcome o WHERE o.outcome = 'placed'
  ), ord AS MATERIALIZED (
    SELECT o.r, g.r AS g FROM jsonb_array_elements(p -> 'orders') AS o(r) JOIN placed g ON g.n = (o.r ->> 0)::int
  ), admins_written AS (
    INSERT INTO company_admins (company_id, user_id, organization_id, environment)
    SELECT g.r ->> 2, g.r ->> 1, v_org, v_env FROM placed g WHERE (g.r ->> 3)::boolean
    ON CONFLICT (company_id, user_id) DO NOTHING
  ), groups_written AS (
    INSERT INTO order_groups (id, organization_id, environment, user_id, company_id, filing_state, source, billing,
                              request, total_cents, idempotency_key)
    SELECT g.r ->> 0, v_org, v_env, g.r ->> 1, g.r ->> 2, g.r ->> 4, g.r ->> 5, g.r ->> 6, nullif(g.r -> 7, 'null'),
           (g.r ->> 8)::bigint, g.r ->> 9
      FROM placed g
  ), orders_written AS (
    INSERT INTO orders (id, organization_id, environment, group_id, company_id, user_id, order_type, filing_state,
                        filing_status, filing_type, subscription_status, details, billing, amount_cents, retail_cents,
                        margin_cents, current_period_end)
    SELECT o.r ->> 1, v_org, v_env, o.g ->> 0, o.g ->> 2, o.g ->> 1, o.r ->> 3, o.g ->> 4, 'submitted', o.r ->> 4,
           o.r ->> 5, nullif(o.r -> 6, 'null'), o.g ->> 6, (o.r ->> 7)::bigint, (o.r ->> 8)::bigint,
           (o.r ->> 9)::bigint,
           CASE WHEN o.r ->> 5 IS NOT NULL THEN ((now() AT TIME ZONE 'UTC')::date + interval '1 year')::date END
      FROM ord o
  ), history_written AS (
    INSERT INTO order_status_history (id, order_id, organization_id, environment, from_status, to_status, actor)
    SELECT o.r ->> 2, o.r ->> 1, v_org, v_env, NULL, 'submitted', o.g ->> 11
      FROM ord o
  )
  SELECT jsonb_agg(o.outcome ORDER BY o.n), coalesce(array_agg(o.n) FILTER (WHERE o.outcome = 'placed'), '{}'),
         sum((o.r ->> 10)::bigint) FILTER (WHERE o.outcome = 'placed'),
         -- emit_events' test for a delivery, asked once for the event types of the whole batch (a placement not placed
         -- writes none, and its events are of the types of the others'): at worst a wake-up nobody needed.
         EXISTS (SELECT 1 FROM webhook_endpoints w
                  WHERE w.organization_id = v_org AND w.environment = v_env AND w.deleted_at IS NULL AND NOT w.disabled
                    AND w.event_types && ARRAY(SELECT e.r ->> 1 FROM jsonb_array_elements(p -> 'events') AS e(r))),
         EXISTS (SELECT 1 FROM event_stream_tenants s
                  WHERE s.organization_id = v_org AND s.environment = v_env AND s.expires_at > now())
    INTO v_outcomes, v_placed, v_min, v_deliveries, v_streams
    FROM outcome o;

  IF cardinality(v_placed) > 0 THEN
    IF cardinality(v_placed) = jsonb_array_length(p -> 'groups') THEN
      v_events := p -> 'events';
      v_debits := p -> 'debits';
    ELSE
      SELECT coalesce(jsonb_agg(e.r ORDER BY e.i), '[]'::jsonb) INTO v_events
        FROM jsonb_array_elements(p -> 'events') WITH ORDINALITY AS e(r, i)
       WHERE (p -> 'event_placements' ->> (e.i::int - 1))::int = ANY (v_placed);
      SELECT coalesce(jsonb_agg(d.r ORDER BY d.i), '[]'::jsonb) INTO v_debits
        FROM jsonb_array_elements(p -> 'debits') WITH ORDINALITY AS d(r, i)
       WHERE (p -> 'debit_placements' ->> (d.i::int - 1))::int = ANY (v_placed);
    END IF;
    PERFORM emit_events(v_org, v_env, v_events);
    IF jsonb_array_length(v_debits) > 0 THEN
      SELECT e.balance_before INTO v_before
        FROM post_ledger_entries(v_org, v_env, v_debits, v_min) e
       WHERE e.id IS NULL;
      IF FOUND THEN
        RAISE EXCEPTION 'insufficient balance' USING ERRCODE = 'FC402', DETAIL = v_before::text;
      END IF;
    END IF;
  END IF;
  RETURN jsonb_build_object('outcomes', v_outcomes, 'created_at', now(),
                            'deliveries', cardinality(v_placed) > 0 AND v_deliveries,
                            'streams', cardinality(v_placed) > 0 AND v_streams);
END
$$;
