-- The rows a placement writes are checked against what they refer to once per statement, not once per row (ORD-18).
--
-- A foreign key checks every inserted row with a query of its own: the executor is started for it, the referenced
-- row is found and locked FOR KEY SHARE (a WAL record when the row is not the transaction's own). A placement's rows
-- ran seventeen such checks: its company admin (company, user), its order group (company), three orders (group),
-- three `submitted` history rows (order), and four ledger entries (order, balance). Counted by
-- `npm run bench:db-instructions`, they were about a fifth of the placement statement's PostgreSQL instructions.
--
-- Those seven keys are replaced by one AFTER INSERT trigger per table that reads the statement's new rows (a
-- transition table) and refuses the statement when any of them refers to a row that does not exist. Measured:
-- 2.97 M PostgreSQL instructions per order became 2.53 M at five placements per statement (4.15 M to 3.98 M for a
-- statement of one).
--
-- A key also keeps the referenced row from going away or changing its key while something refers to it, and takes
-- its lock for that. Here the referenced rows can do neither, so no lock is needed:
--   * companies, users, order groups, orders and balances are never deleted (refuse_reference_delete: DELETE and
--     TRUNCATE are refused for every role, the owner's too);
--   * their keys, and the referring columns of company_admins, order_groups and orders, never change
--     (refuse_reference_change, on an UPDATE that names one of those columns and changes its value);
--   * history and ledger entries are append-only already (migration 052).
-- A referenced row inserted by another transaction that has not committed yet is not seen, so the statement is
-- refused: the safe side. The error is the one the key raised: SQLSTATE 23503 with the key's name.
--
-- Every check probes the referenced table's unique index, one row of the statement at a time, whatever the table's
-- size. The transition table has no statistics and the plans are generic, so nothing in the estimates keeps the
-- planner from reading a whole referenced table: while this was written, one query joining two NOT EXISTS with OR
-- was planned as a hashed subplan over all of `orders`, and orders per second fell tenfold within a minute. So each
-- reference is a NOT EXISTS of its own, and the checks run with hash joins, merge joins and sequential scans off.

CREATE FUNCTION refuse_reference_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'rows of % are never removed: other records refer to them (% is not allowed)', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'restrict_violation';
END
$$;

CREATE FUNCTION refuse_reference_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the key and reference columns of % never change', TG_TABLE_NAME
    USING ERRCODE = 'restrict_violation';
END
$$;

CREATE TRIGGER companies_never_removed BEFORE DELETE OR TRUNCATE ON companies
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_reference_delete();
CREATE TRIGGER users_never_removed BEFORE DELETE OR TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_reference_delete();
CREATE TRIGGER order_groups_never_removed BEFORE DELETE OR TRUNCATE ON order_groups
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_reference_delete();
CREATE TRIGGER orders_never_removed BEFORE DELETE OR TRUNCATE ON orders
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_reference_delete();
CREATE TRIGGER balances_never_removed BEFORE DELETE OR TRUNCATE ON balances
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_reference_delete();

CREATE TRIGGER companies_key_fixed BEFORE UPDATE OF id ON companies
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION refuse_reference_change();
CREATE TRIGGER users_key_fixed BEFORE UPDATE OF id ON users
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION refuse_reference_change();
CREATE TRIGGER order_groups_key_fixed BEFORE UPDATE OF id, company_id, filing_state ON order_groups
  FOR EACH ROW WHEN ((OLD.id, OLD.company_id, OLD.filing_state) IS DISTINCT FROM (NEW.id, NEW.company_id, NEW.filing_state))
  EXECUTE FUNCTION refuse_reference_change();
CREATE TRIGGER orders_key_fixed BEFORE UPDATE OF id, group_id, company_id, filing_state ON orders
  FOR EACH ROW
  WHEN ((OLD.id, OLD.group_id, OLD.company_id, OLD.filing_state) IS DISTINCT FROM
        (NEW.id, NEW.group_id, NEW.company_id, NEW.filing_state))
  EXECUTE FUNCTION refuse_reference_change();
CREATE TRIGGER balances_key_fixed BEFORE UPDATE OF organization_id, environment ON balances
  FOR EACH ROW WHEN ((OLD.organization_id, OLD.environment) IS DISTINCT FROM (NEW.organization_id, NEW.environment))
  EXECUTE FUNCTION refuse_reference_change();
CREATE TRIGGER company_admins_key_fixed BEFORE UPDATE OF company_id, user_id ON company_admins
  FOR EACH ROW WHEN ((OLD.company_id, OLD.user_id) IS DISTINCT FROM (NEW.company_id, NEW.user_id))
  EXECUTE FUNCTION refuse_reference_change();

-- Raised as PostgreSQL raises a foreign key's violation, with the replaced key's name.
CREATE FUNCTION refuse_missing_reference(p_table text, p_constraint text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'insert on table "%" violates foreign key constraint "%"', p_table, p_constraint
    USING ERRCODE = 'foreign_key_violation', TABLE = p_table, CONSTRAINT = p_constraint;
END
$$;

CREATE FUNCTION check_company_admin_references() RETURNS trigger LANGUAGE plpgsql
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

CREATE FUNCTION check_order_group_references() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows n WHERE NOT EXISTS (SELECT 1 FROM companies c WHERE c.id = n.company_id)) THEN
    PERFORM refuse_missing_reference('order_groups', 'order_groups_company_id_fkey');
  END IF;
  RETURN NULL;
END
$$;

CREATE FUNCTION check_order_references() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows n
              WHERE NOT EXISTS (SELECT 1 FROM order_groups g
                                 WHERE g.id = n.group_id AND g.company_id = n.company_id
                                   AND g.filing_state = n.filing_state)) THEN
    PERFORM refuse_missing_reference('orders', 'orders_group_fkey');
  END IF;
  RETURN NULL;
END
$$;

CREATE FUNCTION check_order_status_history_references() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows n WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.id = n.order_id)) THEN
    PERFORM refuse_missing_reference('order_status_history', 'order_status_history_order_id_fkey');
  END IF;
  RETURN NULL;
END
$$;

CREATE FUNCTION check_ledger_entry_references() RETURNS trigger LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off
AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows n
              WHERE n.order_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.id = n.order_id)) THEN
    PERFORM refuse_missing_reference('ledger_entries', 'ledger_entries_order_id_fkey');
  END IF;
  IF EXISTS (SELECT 1 FROM new_rows n
              WHERE NOT EXISTS (SELECT 1 FROM balances b
                                 WHERE b.organization_id = n.organization_id AND b.environment = n.environment)) THEN
    PERFORM refuse_missing_reference('ledger_entries', 'ledger_entries_balance_fkey');
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER company_admins_references AFTER INSERT ON company_admins REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION check_company_admin_references();
CREATE TRIGGER order_groups_references AFTER INSERT ON order_groups REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION check_order_group_references();
CREATE TRIGGER orders_references AFTER INSERT ON orders REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION check_order_references();
CREATE TRIGGER order_status_history_references AFTER INSERT ON order_status_history REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION check_order_status_history_references();
CREATE TRIGGER ledger_entries_references AFTER INSERT ON ledger_entries REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION check_ledger_entry_references();

ALTER TABLE company_admins DROP CONSTRAINT company_admins_company_id_fkey;
ALTER TABLE company_admins DROP CONSTRAINT company_admins_user_id_fkey;
ALTER TABLE order_groups DROP CONSTRAINT order_groups_company_id_fkey;
ALTER TABLE orders DROP CONSTRAINT orders_group_fkey;
ALTER TABLE order_status_history DROP CONSTRAINT order_status_history_order_id_fkey;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_order_id_fkey;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_balance_fkey;
-- Only the replaced key to order groups used this index (migration 095); the check probes the primary key instead.
ALTER TABLE order_groups DROP CONSTRAINT order_groups_company_state_unique;
