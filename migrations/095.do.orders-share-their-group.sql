-- Every order of an order group is for the group's company and filing state (ORD-4), and the database now says so:
-- one foreign key from an order to its group's (id, company_id, filing_state) replaces the two keys it had, to the
-- group (by id) and to the company.
--
-- Nothing guarded is lost: an order still cannot point at a missing group, and through the group's own key to
-- companies it cannot point at a missing company either (neither a group with orders nor a company with groups can
-- be deleted). What is gained: an order whose company or state differs from its group's is refused, where before
-- only the code that plans a placement kept them equal. And each order runs one foreign-key check instead of two:
-- counted by `npm run bench:db-instructions`, 3.04 M PostgreSQL instructions per order became 2.97 M (the extra
-- unique index on order_groups costs one entry per group; the check saved, one per order).
ALTER TABLE order_groups ADD CONSTRAINT order_groups_company_state_unique UNIQUE (id, company_id, filing_state);
ALTER TABLE orders ADD CONSTRAINT orders_group_fkey
  FOREIGN KEY (group_id, company_id, filing_state) REFERENCES order_groups (id, company_id, filing_state);
ALTER TABLE orders DROP CONSTRAINT orders_group_id_fkey;
ALTER TABLE orders DROP CONSTRAINT orders_company_id_fkey;
