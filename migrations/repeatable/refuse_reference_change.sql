-- The keys of the rows others refer to, and the referring columns of company admins, order groups and orders, never
-- change (ORD-16, ORD-18): an UPDATE that names one of those columns and changes its value is refused for every role.
-- Naming a column with its own value changes nothing and is let through.
CREATE OR REPLACE FUNCTION refuse_reference_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the key and reference columns of % never change', TG_TABLE_NAME
    USING ERRCODE = 'restrict_violation';
END
$$;

CREATE OR REPLACE TRIGGER companies_key_fixed BEFORE UPDATE OF id ON companies
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION refuse_reference_change();
CREATE OR REPLACE TRIGGER users_key_fixed BEFORE UPDATE OF id ON users
  FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION refuse_reference_change();
CREATE OR REPLACE TRIGGER order_groups_key_fixed BEFORE UPDATE OF id, company_id, filing_state ON order_groups
  FOR EACH ROW
  WHEN ((OLD.id, OLD.company_id, OLD.filing_state) IS DISTINCT FROM (NEW.id, NEW.company_id, NEW.filing_state))
  EXECUTE FUNCTION refuse_reference_change();
CREATE OR REPLACE TRIGGER orders_key_fixed BEFORE UPDATE OF id, group_id, company_id, filing_state ON orders
  FOR EACH ROW
  WHEN ((OLD.id, OLD.group_id, OLD.company_id, OLD.filing_state) IS DISTINCT FROM
        (NEW.id, NEW.group_id, NEW.company_id, NEW.filing_state))
  EXECUTE FUNCTION refuse_reference_change();
CREATE OR REPLACE TRIGGER balances_key_fixed BEFORE UPDATE OF organization_id, environment ON balances
  FOR EACH ROW WHEN ((OLD.organization_id, OLD.environment) IS DISTINCT FROM (NEW.organization_id, NEW.environment))
  EXECUTE FUNCTION refuse_reference_change();
CREATE OR REPLACE TRIGGER company_admins_key_fixed BEFORE UPDATE OF company_id, user_id ON company_admins
  FOR EACH ROW WHEN ((OLD.company_id, OLD.user_id) IS DISTINCT FROM (NEW.company_id, NEW.user_id))
  EXECUTE FUNCTION refuse_reference_change();
