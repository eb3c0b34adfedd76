-- The placement statement and the two functions every order, status change and ledger posting runs (ORD-13,
-- EVT-5, BILL-17) plan their inner statements once per connection.
--
-- PL/pgSQL keeps each inner statement's plan in the plan cache, which chooses per execution between a custom plan
-- (planned again for these parameter values) and the generic one. For several of place_order_groups' statements it
-- kept choosing custom plans, so every call planned them again: counted by `npm run bench:db-instructions`
-- (callgrind, PostgreSQL instructions per statement), planning was 11 % of a one-placement statement and 4 % of a
-- statement of five. Their generic plans are the plans wanted: every inner statement reads the parameter's rows,
-- or one row by its key (users, order_groups' Idempotency-Key, balances, webhook endpoints by tenant), whatever the
-- values. The setting lasts for the function's call, its nested calls and their foreign-key checks, and touches no
-- other statement of the session.
ALTER FUNCTION place_order_groups(jsonb) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION emit_events(text, text, jsonb) SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION post_ledger_entries(text, text, jsonb, bigint) SET plan_cache_mode = force_generic_plan;
-- A later CREATE OR REPLACE FUNCTION of any of the three replaces its settings too: it must restate this one.
