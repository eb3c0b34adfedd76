-- Technical contact of an organization (ARCHITECTURE.md "Webhooks": "an endpoint that keeps failing is disabled and
-- the organization is told"): the address emailed when the delivery policy disables one of its webhook endpoints.
-- Optional; syntax is checked by the API (validator's isEmail), the database only bounds the length (RFC 5321).
ALTER TABLE organizations ADD COLUMN contact_email text CHECK (length(contact_email) BETWEEN 3 AND 254);
