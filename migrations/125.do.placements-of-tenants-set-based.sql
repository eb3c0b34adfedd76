-- Every placement statement, of one tenant or of several, is place_order_groups_of_tenants now
-- (migrations/repeatable/place_order_groups_of_tenants.sql), which writes all of its tenants' rows by one INSERT per
-- table (ORD-40). The one-tenant function goes: no process of this version calls it. Processes of the previous version
-- have their placements refused until they are replaced (docs/deploying.md, "Database").
DROP FUNCTION place_order_groups_v2(jsonb);
