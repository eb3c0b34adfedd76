-- refuse_missing_reference(p_table, p_constraint): raises as PostgreSQL raises a foreign key's violation (SQLSTATE
-- 23503), with the name of the key a reference check of ORD-18 stands for.
CREATE OR REPLACE FUNCTION refuse_missing_reference(p_table text, p_constraint text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'insert on table "%" violates foreign key constraint "%"', p_table, p_constraint
    USING ERRCODE = 'foreign_key_violation', TABLE = p_table, CONSTRAINT = p_constraint;
END
$$;
