-- The EIN responsible party's tax id is kept sealed until the filing team has filed (ORD-EIN-6 to ORD-EIN-9).
--
-- The IRS needs the full SSN or ITIN on SS-4 line 7b, so keeping only its last four digits left every EIN order
-- without the one number the filing needs. The service now seals it (AES-256-GCM under DATA_ENCRYPTION_KEY, the order
-- id as associated data, src/lib/secret-box.ts) before it leaves the process, and the database only ever holds that
-- sealed text: the CHECK below refuses anything else, so no code path can write the number in clear. The last four
-- digits stay where they were, in the order's details (`responsibleParty.taxIdLast4`), for every view.
--
-- `ein_tax_ids`: one row per EIN order placed since this migration. `sealed` is NULL once the value is destroyed
-- (`destroyed_at` says when): when a correction replaces it the row is updated in place, and retention
-- (TAX_ID_RETENTION_DAYS after the order is filed or cancelled) sets it NULL.
CREATE TABLE ein_tax_ids (
  order_id        text PRIMARY KEY REFERENCES orders(id),
  organization_id text NOT NULL,
  environment     text NOT NULL CHECK (environment IN ('live', 'test')),
  sealed          text CHECK (sealed LIKE 'sealed:v1:%'),
  sealed_at       timestamptz NOT NULL DEFAULT now(),
  destroyed_at    timestamptz,
  CHECK ((sealed IS NULL) = (destroyed_at IS NOT NULL))
);
-- The rows still holding a number: what retention and key rotation go through, however many were destroyed.
CREATE INDEX ein_tax_ids_kept ON ein_tax_ids (order_id) WHERE sealed IS NOT NULL;

-- Every time an operator saw a tax id (ORD-EIN-7): who, when, which order, why, and from where. Only ever added to,
-- like the ledger: the service role may read and insert (src/lib/service-role.ts), and this trigger refuses changes and
-- removals for every role.
CREATE TABLE tax_id_reveals (
  id              text PRIMARY KEY,
  order_id        text NOT NULL REFERENCES orders(id),
  organization_id text NOT NULL,
  environment     text NOT NULL CHECK (environment IN ('live', 'test')),
  actor           text NOT NULL,
  reason          text NOT NULL CHECK (length(btrim(reason)) BETWEEN 1 AND 500),
  client_address  text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tax_id_reveals_order ON tax_id_reveals (order_id, created_at);
CREATE TRIGGER tax_id_reveals_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON tax_id_reveals
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();

-- place_order_groups_v2(p): as in migration 101; an order's values may carry an eleventh element, its sealed tax id,
-- written to ein_tax_ids in the same statement as the order (one transaction per placement, ORD-13). Processes of
-- the previous version send ten elements and write no row, as they kept no tax id.
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
  ), tax_ids_written AS (
    INSERT INTO ein_tax_ids (order_id, organization_id, environment, sealed)
    SELECT o.r ->> 1, v_org, v_env, o.r ->> 10
      FROM ord o WHERE o.r ->> 10 IS NOT NULL
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
