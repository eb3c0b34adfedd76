-- The partner portal's logs (PORTAL-20 to PORTAL-24): the integrator API's failed requests, kept 7 days; the
-- recoveries of an endpoint's failed webhook deliveries and their progress; the response headers of webhook attempts;
-- the events of a company found through an index, like those of an order.

-- One row per integrator API answer of status 400 or more to a request whose API key authenticated (PORTAL-24): the
-- key's id, never the key; the path without its query; at most 8 KiB of the error body. Written once per failed
-- request, never updated; the daily purge deletes rows older than 7 days (src/modules/maintenance/purge.repo.ts).
CREATE TABLE failed_api_requests (
  id              text PRIMARY KEY,
  organization_id text NOT NULL,
  environment     text NOT NULL CHECK (environment IN ('live', 'test')),
  api_key_id      text NOT NULL,
  method          text NOT NULL CHECK (length(method) <= 16),
  path            text NOT NULL CHECK (length(path) <= 2048),
  status          integer NOT NULL CHECK (status BETWEEN 400 AND 599),
  request_id      text NOT NULL CHECK (length(request_id) <= 64),
  error_body      text CHECK (octet_length(error_body) <= 8192),
  created_at      timestamptz NOT NULL DEFAULT now()
);
-- Ids are time-sortable: the tenant's newest first, by status, by request id; the purge goes by created_at.
CREATE INDEX failed_api_requests_tenant ON failed_api_requests (organization_id, environment, id DESC);
CREATE INDEX failed_api_requests_tenant_status ON failed_api_requests (organization_id, environment, status, id DESC);
CREATE INDEX failed_api_requests_request ON failed_api_requests (organization_id, environment, request_id);
CREATE INDEX failed_api_requests_created ON failed_api_requests (created_at);

-- A recovery of one endpoint's failed deliveries created from `since` until the recovery was asked for (PORTAL-22):
-- `total` counted when it starts, `done` re-queued so far, `skipped` no longer failed when reached; `cursor` the last
-- delivery id handled, so a job that is retried goes on where it stopped.
CREATE TABLE webhook_recoveries (
  id              text PRIMARY KEY,
  organization_id text NOT NULL,
  environment     text NOT NULL CHECK (environment IN ('live', 'test')),
  endpoint_id     text NOT NULL REFERENCES webhook_endpoints(id),
  since           timestamptz NOT NULL,
  requested_by    text NOT NULL,
  state           text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'failed')),
  total           integer,
  done            integer NOT NULL DEFAULT 0,
  skipped         integer NOT NULL DEFAULT 0,
  cursor          text,
  error           text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  finished_at     timestamptz
);
CREATE INDEX webhook_recoveries_tenant ON webhook_recoveries (organization_id, environment, id DESC);

-- The receiver's response headers of an attempt, as an object of lower-case names (PORTAL-21): kept only where the
-- body would be (public addresses, SEC-1), at most 2 KiB of them.
ALTER TABLE webhook_attempts ADD COLUMN response_headers jsonb;

-- The events explorer finds a company's events (PORTAL-23) as GET /events finds an order's.
CREATE INDEX events_tenant_company ON events (organization_id, environment, (data ->> 'companyId'), id DESC)
  WITH (deduplicate_items = off);
