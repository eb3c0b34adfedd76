-- place_order_groups_of_tenants(p): placements of SEVERAL tenants in one statement, so one transaction and one commit
-- (ORD-17, ORD-40). p: a JSON array of place_order_groups_v2 parameters, one per tenant (src/modules/orders/
-- placements.repo.ts `placementsPayload`). Each is written by place_order_groups_v2, which decides and writes that
-- tenant's placements exactly as it would alone and locks that tenant's balance row at its debit, the last step.
--
-- The tenants are written in the order of (organization_id, environment), whatever the order of p, so every statement
-- of this function takes the balance locks it needs in one order: two of them running at once (two server processes)
-- can make each other wait, never deadlock. Every other writer of a balance locks one tenant's row per transaction
-- (lock_balance, post_ledger_entries) and waits on no row of another tenant while it holds it. A tenant's balance row
-- therefore stays locked from its debit to the commit, through the later tenants' placements.
--
-- Returns a JSON array with place_order_groups_v2's answer for each element of p, in the order of p. When a tenant's
-- balance cannot cover its placements, it raises place_order_groups_v2's SQLSTATE 'FC402' and the statement, with
-- the caller's transaction, writes nothing for any tenant: the caller writes each tenant's placements again on their
-- own to learn whose balance is short.
--
-- Planned once per connection (generic plans, ORD-13): its one inner query reads the parameter.
CREATE OR REPLACE FUNCTION place_order_groups_of_tenants(p jsonb) RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  v_answers jsonb[] := array_fill(NULL::jsonb, ARRAY[jsonb_array_length(p)]);
  t record;
BEGIN
  FOR t IN SELECT x.payload, x.i
             FROM jsonb_array_elements(p) WITH ORDINALITY AS x(payload, i)
            ORDER BY x.payload ->> 'organization_id', x.payload ->> 'environment', x.i
  LOOP
    v_answers[t.i] := place_order_groups_v2(t.payload);
  END LOOP;
  RETURN to_jsonb(v_answers);
END
$$;
