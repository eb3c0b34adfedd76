-- A ledger entry refers to its order (when it has one) and to its tenant's balance row, checked once per statement
-- (ORD-18): an AFTER INSERT trigger reads the statement's new rows (a transition table) once and refuses the statement
-- when any of them refers to a row that does not exist, probing the referenced table's unique index once per distinct
-- key. The transition table has no statistics and the plans are generic, so nothing in the estimates keeps the planner
-- from reading a whole referenced table: each reference is a NOT EXISTS of its own, and the check runs with hash
-- joins, merge joins and sequential scans off.
CREATE OR REPLACE FUNCTION check_ledger_entry_references() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM (SELECT DISTINCT n.order_id FROM new_rows n WHERE n.order_id IS NOT NULL) n
              WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.id = n.order_id)) THEN
    PERFORM refuse_missing_reference('ledger_entries', 'ledger_entries_order_id_fkey');
  END IF;
  IF EXISTS (SELECT 1 FROM (SELECT DISTINCT n.organization_id, n.environment FROM new_rows n) n
              WHERE NOT EXISTS (SELECT 1 FROM balances b
                                 WHERE b.organization_id = n.organization_id AND b.environment = n.environment)) THEN
    PERFORM refuse_missing_reference('ledger_entries', 'ledger_entries_balance_fkey');
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER ledger_entries_references AFTER INSERT ON ledger_entries REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION check_ledger_entry_references();
