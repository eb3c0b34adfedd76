-- A status-history row refers to its order, checked once per statement
-- (ORD-18): an AFTER INSERT trigger reads the statement's new rows (a transition table) once and refuses the statement
-- when any of them refers to a row that does not exist, probing the referenced table's unique index once per distinct
-- key. The transition table has no statistics and the plans are generic, so nothing in the estimates keeps the planner
-- from reading a whole referenced table: each reference is a NOT EXISTS of its own, and the check runs with hash
-- joins, merge joins and sequential scans off.
CREATE OR REPLACE FUNCTION check_order_status_history_references() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows n WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.id = n.order_id)) THEN
    PERFORM refuse_missing_reference('order_status_history', 'order_status_history_order_id_fkey');
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER order_status_history_references AFTER INSERT ON order_status_history
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION check_order_status_history_references();
