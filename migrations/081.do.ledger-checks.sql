-- The result of every ledger verification (BILL-18): the daily job and `ledger verify` each add a row, so every
-- process's metrics can report the last check's result and time, whichever process ran it, and a restart does not
-- forget a difference found. One row a day: small enough to keep.
CREATE TABLE ledger_checks (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  checked_at  timestamptz NOT NULL DEFAULT now(),
  differences integer NOT NULL CHECK (differences >= 0)
);
