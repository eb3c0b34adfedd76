-- Rate-limit counters shared by every process of a deployment. Each process counts in memory and adds its
-- hits here in one statement every few hundred ms; the answer tells it what all processes counted. UNLOGGED:
-- counters are worth nothing after a crash (losing them only resets the current windows), so they skip the WAL.
CREATE UNLOGGED TABLE rate_limit_counters (
  bucket       text NOT NULL,      -- what is limited and for whom, e.g. api:<key hash prefix>, sign-in:<client address>
  window_start bigint NOT NULL,    -- ms since the epoch, a multiple of the window length
  hits         integer NOT NULL,
  expires_at   timestamptz NOT NULL,
  PRIMARY KEY (bucket, window_start)
);
CREATE INDEX rate_limit_counters_expires ON rate_limit_counters (expires_at);
