-- Console (issue 6). Operators sign in by e-mail, compared case-insensitively; sessions are found by
-- operator when one is disabled; the order page reads the events of one order.
CREATE UNIQUE INDEX operators_email_lower ON operators (lower(email));
CREATE INDEX operator_sessions_operator ON operator_sessions (operator_id) WHERE revoked_at IS NULL;
CREATE INDEX events_order ON events ((data->>'orderId')) WHERE data ? 'orderId';
CREATE INDEX login_attempts_time ON login_attempts (attempted_at);
