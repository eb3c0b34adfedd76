-- Prices and state fees are kept in each process's memory (BILL-19); any change to them tells every process to read
-- them again (NOTIFY pricing_changed '*'). These tables change rarely (operators, integrators setting prices), so a
-- NOTIFY in their transactions costs nothing that matters (OPS-5).
CREATE OR REPLACE FUNCTION notify_pricing_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('pricing_changed', '*');
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER price_catalog_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON price_catalog
  FOR EACH STATEMENT EXECUTE FUNCTION notify_pricing_changed();
CREATE OR REPLACE TRIGGER organization_prices_changed
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON organization_prices
  FOR EACH STATEMENT EXECUTE FUNCTION notify_pricing_changed();
CREATE OR REPLACE TRIGGER organization_wholesale_prices_changed
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON organization_wholesale_prices
  FOR EACH STATEMENT EXECUTE FUNCTION notify_pricing_changed();
CREATE OR REPLACE TRIGGER state_fees_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON state_fees
  FOR EACH STATEMENT EXECUTE FUNCTION notify_pricing_changed();
