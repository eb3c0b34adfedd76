-- The console's work queue lists the orders waiting for the filing team oldest first, across the three queue
-- statuses, a page at a time after the last order shown. This index gives that order directly, so a page reads its
-- 50 rows and joins them, whatever the size of the queue or of the tables it joins.
CREATE INDEX orders_queue_order ON orders (environment, created_at, id)
  WHERE filing_status IN ('submitted', 'pending', 'exception');
