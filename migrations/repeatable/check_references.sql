-- The rows a placement writes are checked against what they refer to once per statement (ORD-18): one AFTER INSERT
-- trigger per table reads the statement's new rows (a transition table) and refuses the statement when any of them
-- refers to a row that does not exist, probing the referenced table's unique index once per distinct key. The
-- transition table has no statistics and the plans are generic, so nothing in the estimates keeps the planner from
-- reading a whole referenced table: each reference is a NOT EXISTS of its own, and the checks run with hash joins,
-- merge joins and sequential scans off.

CREATE OR REPLACE FUNCTION check_company_admin_references() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows n WHERE NOT EXISTS (SELECT 1 FROM companies c WHERE c.id = n.company_id)) THEN
    PERFORM refuse_missing_reference('company_admins', 'company_admins_company_id_fkey');
  END IF;
  IF EXISTS (SELECT 1 FROM new_rows n WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = n.user_id)) THEN
    PERFORM refuse_missing_reference('company_admins', 'company_admins_user_id_fkey');
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION check_order_group_references() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows n WHERE NOT EXISTS (SELECT 1 FROM companies c WHERE c.id = n.company_id)) THEN
    PERFORM refuse_missing_reference('order_groups', 'order_groups_company_id_fkey');
  END IF;
  RETURN NULL;
END
$$;

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

CREATE OR REPLACE TRIGGER company_admins_references AFTER INSERT ON company_admins REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION check_company_admin_references();
CREATE OR REPLACE TRIGGER order_groups_references AFTER INSERT ON order_groups REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION check_order_group_references();
CREATE OR REPLACE TRIGGER orders_references AFTER INSERT ON orders REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION check_order_references();
CREATE OR REPLACE TRIGGER order_status_history_references AFTER INSERT ON order_status_history
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION check_order_status_history_references();
CREATE OR REPLACE TRIGGER ledger_entries_references AFTER INSERT ON ledger_entries REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION check_ledger_entry_references();
