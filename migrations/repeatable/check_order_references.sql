-- An order refers to its group's (id, company, filing state) (ORD-4), checked once per statement
-- (ORD-18): an AFTER INSERT trigger reads the statement's new rows (a transition table) once and refuses the statement
-- when any of them refers to a row that does not exist, probing the referenced table's unique index once per distinct
-- key. The transition table has no statistics and the plans are generic, so nothing in the estimates keeps the planner
-- from reading a whole referenced table: each reference is a NOT EXISTS of its own, and the check runs with hash
-- joins, merge joins and sequential scans off.
CREATE OR REPLACE FUNCTION check_order_references() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM (SELECT DISTINCT n.group_id, n.company_id, n.filing_state FROM new_rows n) n
              WHERE NOT EXISTS (SELECT 1 FROM order_groups g
                                 WHERE g.id = n.group_id AND g.company_id = n.company_id
                                   AND g.filing_state = n.filing_state)) THEN
    PERFORM refuse_missing_reference('orders', 'orders_group_fkey');
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER orders_references AFTER INSERT ON orders REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION check_order_references();
