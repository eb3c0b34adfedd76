-- Companies, users, order groups, orders and balances are never removed (ORD-16, ORD-18): other records refer to them
-- (some without a foreign key, ORD-16), so DELETE and TRUNCATE are refused for every role, the owner's too.
CREATE OR REPLACE FUNCTION refuse_reference_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'rows of % are never removed: other records refer to them (% is not allowed)', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'restrict_violation';
END
$$;

CREATE OR REPLACE TRIGGER companies_never_removed BEFORE DELETE OR TRUNCATE ON companies
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_reference_delete();
CREATE OR REPLACE TRIGGER users_never_removed BEFORE DELETE OR TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_reference_delete();
CREATE OR REPLACE TRIGGER order_groups_never_removed BEFORE DELETE OR TRUNCATE ON order_groups
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_reference_delete();
CREATE OR REPLACE TRIGGER orders_never_removed BEFORE DELETE OR TRUNCATE ON orders
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_reference_delete();
CREATE OR REPLACE TRIGGER balances_never_removed BEFORE DELETE OR TRUNCATE ON balances
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_reference_delete();
