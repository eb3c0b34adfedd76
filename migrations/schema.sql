-- The schema of a freshly migrated database: what the numbered migrations and then migrations/repeatable/ make,
-- read from its catalog (src/lib/schema-snapshot.ts). Written by `npm run db:snapshot`; do not edit it by hand.
-- test/schema-snapshot.test.ts fails when a freshly migrated database differs from it.

GRANT USAGE ON SCHEMA public TO PUBLIC;
GRANT USAGE ON SCHEMA public TO fcs_service;

CREATE TABLE public.api_key_uses (
    api_key_id text NOT NULL,
    last_used_at timestamp with time zone NOT NULL
);
ALTER TABLE public.api_key_uses ADD CONSTRAINT api_key_uses_api_key_id_fkey FOREIGN KEY (api_key_id) REFERENCES api_keys(id);
ALTER TABLE public.api_key_uses ADD CONSTRAINT api_key_uses_pkey PRIMARY KEY (api_key_id);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.api_key_uses TO fcs_service;

CREATE TABLE public.api_keys (
    id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    key_hash text NOT NULL,
    redacted text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    revoked_at timestamp with time zone,
    checksummed boolean DEFAULT false NOT NULL,
    name text DEFAULT ''::text NOT NULL,
    expires_at timestamp with time zone
);
ALTER TABLE public.api_keys ADD CONSTRAINT api_keys_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.api_keys ADD CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash);
ALTER TABLE public.api_keys ADD CONSTRAINT api_keys_name_check CHECK ((length(name) <= 100));
ALTER TABLE public.api_keys ADD CONSTRAINT api_keys_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.api_keys ADD CONSTRAINT api_keys_pkey PRIMARY KEY (id);
CREATE INDEX api_keys_org ON public.api_keys USING btree (organization_id);
CREATE INDEX api_keys_unchecked ON public.api_keys USING btree (key_hash) WHERE ((NOT checksummed) AND (revoked_at IS NULL));
CREATE TRIGGER api_keys_notify_change AFTER DELETE OR UPDATE ON public.api_keys FOR EACH ROW EXECUTE FUNCTION notify_api_key_change();
CREATE TRIGGER api_keys_notify_truncate AFTER TRUNCATE ON public.api_keys FOR EACH STATEMENT EXECUTE FUNCTION notify_api_key_change();
CREATE TRIGGER api_keys_notify_unchecked_insert AFTER INSERT ON public.api_keys FOR EACH ROW WHEN ((NOT new.checksummed)) EXECUTE FUNCTION notify_unchecked_api_key();
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.api_keys TO fcs_service;

CREATE TABLE public.audit_log (
    id text NOT NULL,
    organization_id text NOT NULL,
    environment text,
    actor_kind text NOT NULL,
    actor_id text,
    actor_label text,
    client_address text,
    action text NOT NULL,
    target_id text,
    before jsonb,
    after jsonb,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.audit_log ADD CONSTRAINT audit_log_action_check CHECK ((action ~ '^[a-z_]+\.[a-z_]+$'::text));
ALTER TABLE public.audit_log ADD CONSTRAINT audit_log_actor_kind_check CHECK ((actor_kind = ANY (ARRAY['member'::text, 'operator'::text, 'operator-token'::text, 'cli'::text])));
ALTER TABLE public.audit_log ADD CONSTRAINT audit_log_actor_label_check CHECK ((length(actor_label) <= 320));
ALTER TABLE public.audit_log ADD CONSTRAINT audit_log_check CHECK (((actor_kind = ANY (ARRAY['member'::text, 'operator'::text])) = (actor_id IS NOT NULL)));
ALTER TABLE public.audit_log ADD CONSTRAINT audit_log_client_address_check CHECK ((length(client_address) <= 100));
ALTER TABLE public.audit_log ADD CONSTRAINT audit_log_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.audit_log ADD CONSTRAINT audit_log_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.audit_log ADD CONSTRAINT audit_log_pkey PRIMARY KEY (id);
CREATE INDEX audit_log_organization_action_recent ON public.audit_log USING btree (organization_id, action, created_at DESC, id DESC) WITH (deduplicate_items=off);
CREATE INDEX audit_log_organization_actor_recent ON public.audit_log USING btree (organization_id, lower(actor_label), created_at DESC, id DESC) WITH (deduplicate_items=off);
CREATE INDEX audit_log_organization_recent ON public.audit_log USING btree (organization_id, created_at DESC, id DESC) WITH (deduplicate_items=off);
CREATE INDEX audit_log_recent ON public.audit_log USING btree (created_at DESC, id DESC) WITH (deduplicate_items=off);
CREATE TRIGGER audit_log_append_only BEFORE DELETE OR UPDATE OR TRUNCATE ON public.audit_log FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
GRANT SELECT, INSERT ON TABLE public.audit_log TO fcs_service;

CREATE TABLE public.auto_recharge_settings (
    organization_id text NOT NULL,
    enabled boolean DEFAULT false NOT NULL,
    threshold_cents bigint,
    amount_cents bigint,
    stripe_customer text,
    payment_method text,
    setup_session_id text,
    disabled_reason text,
    method_saved_at timestamp with time zone,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.auto_recharge_settings ADD CONSTRAINT auto_recharge_settings_amount_cents_check CHECK ((amount_cents > 0));
ALTER TABLE public.auto_recharge_settings ADD CONSTRAINT auto_recharge_settings_check CHECK (((NOT enabled) OR ((threshold_cents IS NOT NULL) AND (amount_cents IS NOT NULL) AND (payment_method IS NOT NULL) AND (stripe_customer IS NOT NULL))));
ALTER TABLE public.auto_recharge_settings ADD CONSTRAINT auto_recharge_settings_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.auto_recharge_settings ADD CONSTRAINT auto_recharge_settings_pkey PRIMARY KEY (organization_id);
ALTER TABLE public.auto_recharge_settings ADD CONSTRAINT auto_recharge_settings_threshold_cents_check CHECK ((threshold_cents >= 0));
CREATE INDEX auto_recharge_settings_setup_session ON public.auto_recharge_settings USING btree (setup_session_id) WHERE (setup_session_id IS NOT NULL);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.auto_recharge_settings TO fcs_service;

CREATE TABLE public.auto_recharges (
    id text NOT NULL,
    organization_id text NOT NULL,
    environment text DEFAULT 'live'::text NOT NULL,
    amount_cents bigint NOT NULL,
    threshold_cents bigint NOT NULL,
    stripe_customer text NOT NULL,
    payment_method text NOT NULL,
    status text DEFAULT 'queued'::text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    payment_intent text,
    top_up_id text,
    failure_message text,
    triggered_by text,
    balance_cents bigint,
    next_attempt_at timestamp with time zone,
    settled_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.auto_recharges ADD CONSTRAINT auto_recharges_amount_cents_check CHECK ((amount_cents > 0));
ALTER TABLE public.auto_recharges ADD CONSTRAINT auto_recharges_attempts_check CHECK (((attempts >= 0) AND (attempts <= 3)));
ALTER TABLE public.auto_recharges ADD CONSTRAINT auto_recharges_check CHECK (((status = ANY (ARRAY['succeeded'::text, 'failed'::text])) = (settled_at IS NOT NULL)));
ALTER TABLE public.auto_recharges ADD CONSTRAINT auto_recharges_environment_check CHECK ((environment = 'live'::text));
ALTER TABLE public.auto_recharges ADD CONSTRAINT auto_recharges_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.auto_recharges ADD CONSTRAINT auto_recharges_pkey PRIMARY KEY (id);
ALTER TABLE public.auto_recharges ADD CONSTRAINT auto_recharges_status_check CHECK ((status = ANY (ARRAY['queued'::text, 'processing'::text, 'succeeded'::text, 'failed'::text])));
ALTER TABLE public.auto_recharges ADD CONSTRAINT auto_recharges_threshold_cents_check CHECK ((threshold_cents >= 0));
ALTER TABLE public.auto_recharges ADD CONSTRAINT auto_recharges_top_up_id_fkey FOREIGN KEY (top_up_id) REFERENCES top_ups(id);
CREATE UNIQUE INDEX auto_recharges_one_in_flight ON public.auto_recharges USING btree (organization_id) WHERE (status = ANY (ARRAY['queued'::text, 'processing'::text]));
CREATE INDEX auto_recharges_organization ON public.auto_recharges USING btree (organization_id, id DESC);
CREATE INDEX auto_recharges_payment_intent ON public.auto_recharges USING btree (payment_intent) WHERE (payment_intent IS NOT NULL);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.auto_recharges TO fcs_service;

CREATE TABLE public.balances (
    organization_id text NOT NULL,
    environment text NOT NULL,
    balance_cents bigint DEFAULT 0 NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    last_entry_id text
);
ALTER TABLE public.balances ADD CONSTRAINT balances_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.balances ADD CONSTRAINT balances_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.balances ADD CONSTRAINT balances_pkey PRIMARY KEY (organization_id, environment);
CREATE TRIGGER balances_key_fixed BEFORE UPDATE OF organization_id, environment ON public.balances FOR EACH ROW WHEN (((old.organization_id IS DISTINCT FROM new.organization_id) OR (old.environment IS DISTINCT FROM new.environment))) EXECUTE FUNCTION refuse_reference_change();
CREATE TRIGGER balances_low_alert AFTER UPDATE OF balance_cents ON public.balances FOR EACH ROW WHEN ((new.balance_cents < old.balance_cents)) EXECUTE FUNCTION alert_low_balance();
CREATE TRIGGER balances_never_removed BEFORE DELETE OR TRUNCATE ON public.balances FOR EACH STATEMENT EXECUTE FUNCTION refuse_reference_delete();
CREATE TRIGGER balances_queue_auto_recharge AFTER UPDATE OF balance_cents ON public.balances FOR EACH ROW WHEN (((new.environment = 'live'::text) AND (new.balance_cents < old.balance_cents))) EXECUTE FUNCTION queue_auto_recharge();
GRANT SELECT ON TABLE public.balances TO fcs_service;
GRANT INSERT (organization_id) ON TABLE public.balances TO fcs_service;
GRANT INSERT (environment) ON TABLE public.balances TO fcs_service;

CREATE TABLE public.card_checkouts (
    id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    user_id text NOT NULL,
    company_id text,
    provider text NOT NULL,
    provider_session_id text,
    redirect_url text,
    form_key text,
    amount_cents bigint NOT NULL,
    intent jsonb,
    status text DEFAULT 'open'::text NOT NULL,
    group_id text,
    payment_id text,
    failure_message text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.card_checkouts ADD CONSTRAINT card_checkouts_amount_cents_check CHECK ((amount_cents > 0));
ALTER TABLE public.card_checkouts ADD CONSTRAINT card_checkouts_check CHECK (((status <> 'paid'::text) OR (payment_id IS NOT NULL)));
ALTER TABLE public.card_checkouts ADD CONSTRAINT card_checkouts_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(id);
ALTER TABLE public.card_checkouts ADD CONSTRAINT card_checkouts_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.card_checkouts ADD CONSTRAINT card_checkouts_group_id_fkey FOREIGN KEY (group_id) REFERENCES order_groups(id);
ALTER TABLE public.card_checkouts ADD CONSTRAINT card_checkouts_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.card_checkouts ADD CONSTRAINT card_checkouts_payment_id_fkey FOREIGN KEY (payment_id) REFERENCES payments(id);
ALTER TABLE public.card_checkouts ADD CONSTRAINT card_checkouts_pkey PRIMARY KEY (id);
ALTER TABLE public.card_checkouts ADD CONSTRAINT card_checkouts_provider_session_id_key UNIQUE (provider_session_id);
ALTER TABLE public.card_checkouts ADD CONSTRAINT card_checkouts_status_check CHECK ((status = ANY (ARRAY['open'::text, 'processing'::text, 'paid'::text, 'failed'::text, 'expired'::text])));
ALTER TABLE public.card_checkouts ADD CONSTRAINT card_checkouts_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(id);
CREATE INDEX card_checkouts_form ON public.card_checkouts USING btree (organization_id, environment, form_key, created_at DESC) WHERE (form_key IS NOT NULL);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.card_checkouts TO fcs_service;

CREATE TABLE public.card_refunds (
    id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    order_id text NOT NULL,
    payment_id text NOT NULL,
    provider text NOT NULL,
    amount_cents bigint NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    provider_reference text,
    attempts integer DEFAULT 0 NOT NULL,
    last_error text,
    last_attempt_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    refunded_at timestamp with time zone
);
ALTER TABLE public.card_refunds ADD CONSTRAINT card_refunds_amount_cents_check CHECK ((amount_cents > 0));
ALTER TABLE public.card_refunds ADD CONSTRAINT card_refunds_check CHECK (((status = 'succeeded'::text) = (refunded_at IS NOT NULL)));
ALTER TABLE public.card_refunds ADD CONSTRAINT card_refunds_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.card_refunds ADD CONSTRAINT card_refunds_order_id_fkey FOREIGN KEY (order_id) REFERENCES orders(id);
ALTER TABLE public.card_refunds ADD CONSTRAINT card_refunds_order_id_key UNIQUE (order_id);
ALTER TABLE public.card_refunds ADD CONSTRAINT card_refunds_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.card_refunds ADD CONSTRAINT card_refunds_payment_id_fkey FOREIGN KEY (payment_id) REFERENCES payments(id);
ALTER TABLE public.card_refunds ADD CONSTRAINT card_refunds_pkey PRIMARY KEY (id);
ALTER TABLE public.card_refunds ADD CONSTRAINT card_refunds_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'succeeded'::text])));
CREATE INDEX card_refunds_payment ON public.card_refunds USING btree (payment_id);
CREATE INDEX card_refunds_pending ON public.card_refunds USING btree (created_at) WHERE (status = 'pending'::text);
CREATE CONSTRAINT TRIGGER card_refunds_within_payment AFTER INSERT OR UPDATE OF amount_cents ON public.card_refunds NOT DEFERRABLE INITIALLY IMMEDIATE FOR EACH ROW EXECUTE FUNCTION card_refunds_within_payment();
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.card_refunds TO fcs_service;

CREATE TABLE public.checkout_forms (
    token_hash text NOT NULL,
    session_id_hash text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.checkout_forms ADD CONSTRAINT checkout_forms_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.checkout_forms ADD CONSTRAINT checkout_forms_pkey PRIMARY KEY (token_hash);
ALTER TABLE public.checkout_forms ADD CONSTRAINT checkout_forms_session_id_hash_fkey FOREIGN KEY (session_id_hash) REFERENCES dashboard_sessions(id_hash) ON DELETE CASCADE;
CREATE INDEX checkout_forms_created ON public.checkout_forms USING btree (created_at);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.checkout_forms TO fcs_service;

CREATE TABLE public.companies (
    id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    slug text NOT NULL,
    legal_name text NOT NULL,
    trade_name text,
    ein text,
    entity_type text NOT NULL,
    structure_type text,
    tax_election text,
    fiscal_end_month text DEFAULT 'December'::text NOT NULL,
    formation_date date,
    formation_state text,
    principal_address jsonb NOT NULL,
    mailing_address jsonb NOT NULL,
    officers jsonb DEFAULT '[]'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.companies ADD CONSTRAINT companies_entity_type_check CHECK ((entity_type = ANY (ARRAY['LLC'::text, 'CORP'::text])));
ALTER TABLE public.companies ADD CONSTRAINT companies_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.companies ADD CONSTRAINT companies_pkey PRIMARY KEY (id);
ALTER TABLE public.companies ADD CONSTRAINT companies_slug_unique UNIQUE (organization_id, environment, slug);
CREATE TRIGGER companies_key_fixed BEFORE UPDATE OF id ON public.companies FOR EACH ROW WHEN ((old.id IS DISTINCT FROM new.id)) EXECUTE FUNCTION refuse_reference_change();
CREATE TRIGGER companies_never_removed BEFORE DELETE OR TRUNCATE ON public.companies FOR EACH STATEMENT EXECUTE FUNCTION refuse_reference_delete();
GRANT SELECT, INSERT, UPDATE ON TABLE public.companies TO fcs_service;

CREATE TABLE public.company_admins (
    company_id text NOT NULL,
    user_id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.company_admins ADD CONSTRAINT company_admins_pkey PRIMARY KEY (company_id, user_id);
CREATE INDEX company_admins_user ON public.company_admins USING btree (user_id);
CREATE TRIGGER company_admins_key_fixed BEFORE UPDATE OF company_id, user_id ON public.company_admins FOR EACH ROW WHEN (((old.company_id IS DISTINCT FROM new.company_id) OR (old.user_id IS DISTINCT FROM new.user_id))) EXECUTE FUNCTION refuse_reference_change();
CREATE TRIGGER company_admins_references AFTER INSERT ON public.company_admins REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION check_company_admin_references();
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.company_admins TO fcs_service;

CREATE TABLE public.company_calendar_override_changes (
    id bigint DEFAULT nextval('company_calendar_override_changes_id_seq'::regclass) NOT NULL,
    company_id text NOT NULL,
    state text NOT NULL,
    changed_at timestamp with time zone DEFAULT now() NOT NULL,
    changed_by text NOT NULL,
    note text NOT NULL,
    before jsonb,
    after jsonb NOT NULL
);
ALTER TABLE public.company_calendar_override_changes ADD CONSTRAINT company_calendar_override_changes_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(id);
ALTER TABLE public.company_calendar_override_changes ADD CONSTRAINT company_calendar_override_changes_pkey PRIMARY KEY (id);
CREATE INDEX company_calendar_override_changes_company ON public.company_calendar_override_changes USING btree (company_id, id DESC);
CREATE TRIGGER company_calendar_override_changes_append_only BEFORE DELETE OR UPDATE OR TRUNCATE ON public.company_calendar_override_changes FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
GRANT SELECT, INSERT ON TABLE public.company_calendar_override_changes TO fcs_service;

CREATE TABLE public.company_calendar_overrides (
    company_id text NOT NULL,
    state text NOT NULL,
    anchor_date date,
    anchor_reason text,
    estimated_tax boolean DEFAULT false NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_by text NOT NULL
);
ALTER TABLE public.company_calendar_overrides ADD CONSTRAINT company_calendar_overrides_anchor_reason_check CHECK ((anchor_reason = ANY (ARRAY['reinstatement'::text, 'conversion'::text, 'first_day_of_business'::text, 'correction'::text])));
ALTER TABLE public.company_calendar_overrides ADD CONSTRAINT company_calendar_overrides_check CHECK (((anchor_date IS NULL) = (anchor_reason IS NULL)));
ALTER TABLE public.company_calendar_overrides ADD CONSTRAINT company_calendar_overrides_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(id);
ALTER TABLE public.company_calendar_overrides ADD CONSTRAINT company_calendar_overrides_pkey PRIMARY KEY (company_id, state);
ALTER TABLE public.company_calendar_overrides ADD CONSTRAINT company_calendar_overrides_state_check CHECK ((state ~ '^[A-Z]{2}$'::text));
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.company_calendar_overrides TO fcs_service;

CREATE TABLE public.compliance_reminders (
    organization_id text NOT NULL,
    environment text NOT NULL,
    company_id text NOT NULL,
    jurisdiction text NOT NULL,
    kind text NOT NULL,
    due_date date NOT NULL,
    threshold text NOT NULL,
    event_id text,
    sent_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.compliance_reminders ADD CONSTRAINT compliance_reminders_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(id);
ALTER TABLE public.compliance_reminders ADD CONSTRAINT compliance_reminders_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.compliance_reminders ADD CONSTRAINT compliance_reminders_kind_check CHECK ((kind = ANY (ARRAY['annual_report'::text, 'initial_report'::text, 'estimated_tax'::text])));
ALTER TABLE public.compliance_reminders ADD CONSTRAINT compliance_reminders_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.compliance_reminders ADD CONSTRAINT compliance_reminders_pkey PRIMARY KEY (company_id, jurisdiction, kind, due_date, threshold);
ALTER TABLE public.compliance_reminders ADD CONSTRAINT compliance_reminders_threshold_check CHECK ((threshold = ANY (ARRAY['60_days'::text, '30_days'::text, '7_days'::text, 'missed'::text])));
CREATE INDEX compliance_reminders_tenant ON public.compliance_reminders USING btree (organization_id, environment, sent_at DESC);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.compliance_reminders TO fcs_service;

CREATE TABLE public.compliance_rule_changes (
    id bigint DEFAULT nextval('compliance_rule_changes_id_seq'::regclass) NOT NULL,
    state text NOT NULL,
    changed_at timestamp with time zone DEFAULT now() NOT NULL,
    changed_by text NOT NULL,
    note text,
    before jsonb NOT NULL,
    after jsonb NOT NULL
);
ALTER TABLE public.compliance_rule_changes ADD CONSTRAINT compliance_rule_changes_pkey PRIMARY KEY (id);
ALTER TABLE public.compliance_rule_changes ADD CONSTRAINT compliance_rule_changes_state_fkey FOREIGN KEY (state) REFERENCES compliance_rules(state);
CREATE INDEX compliance_rule_changes_state ON public.compliance_rule_changes USING btree (state, id DESC);
CREATE TRIGGER compliance_rule_changes_append_only BEFORE DELETE OR UPDATE OR TRUNCATE ON public.compliance_rule_changes FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
GRANT SELECT, INSERT ON TABLE public.compliance_rule_changes TO fcs_service;

CREATE TABLE public.compliance_rules (
    state text NOT NULL,
    rule jsonb NOT NULL,
    data_as_of text NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_by text NOT NULL
);
ALTER TABLE public.compliance_rules ADD CONSTRAINT compliance_rules_pkey PRIMARY KEY (state);
ALTER TABLE public.compliance_rules ADD CONSTRAINT compliance_rules_rule_check CHECK ((jsonb_typeof(rule) = 'object'::text));
ALTER TABLE public.compliance_rules ADD CONSTRAINT compliance_rules_state_check CHECK ((state ~ '^[A-Z]{2}$'::text));
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.compliance_rules TO fcs_service;

CREATE TABLE public.dashboard_sessions (
    id_hash text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    user_id text NOT NULL,
    magic_link_id text,
    csrf_token text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    revoked_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_seen_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.dashboard_sessions ADD CONSTRAINT dashboard_sessions_magic_link_id_fkey FOREIGN KEY (magic_link_id) REFERENCES magic_links(id);
ALTER TABLE public.dashboard_sessions ADD CONSTRAINT dashboard_sessions_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.dashboard_sessions ADD CONSTRAINT dashboard_sessions_pkey PRIMARY KEY (id_hash);
ALTER TABLE public.dashboard_sessions ADD CONSTRAINT dashboard_sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(id);
CREATE INDEX dashboard_sessions_user ON public.dashboard_sessions USING btree (user_id);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.dashboard_sessions TO fcs_service;

CREATE TABLE public.documents (
    id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    order_id text,
    company_id text NOT NULL,
    document_type text NOT NULL,
    file_name text NOT NULL,
    file_type text NOT NULL,
    storage_key text NOT NULL,
    size_bytes bigint NOT NULL,
    uploaded_by text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.documents ADD CONSTRAINT documents_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(id);
ALTER TABLE public.documents ADD CONSTRAINT documents_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.documents ADD CONSTRAINT documents_order_id_fkey FOREIGN KEY (order_id) REFERENCES orders(id);
ALTER TABLE public.documents ADD CONSTRAINT documents_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.documents ADD CONSTRAINT documents_pkey PRIMARY KEY (id);
CREATE INDEX documents_company ON public.documents USING btree (company_id);
CREATE INDEX documents_order ON public.documents USING btree (order_id) WHERE (order_id IS NOT NULL);
CREATE INDEX documents_tenant ON public.documents USING btree (organization_id, environment, id DESC);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.documents TO fcs_service;

CREATE TABLE public.ein_tax_ids (
    order_id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    sealed text,
    sealed_at timestamp with time zone DEFAULT now() NOT NULL,
    destroyed_at timestamp with time zone
);
ALTER TABLE public.ein_tax_ids ADD CONSTRAINT ein_tax_ids_check CHECK (((sealed IS NULL) = (destroyed_at IS NOT NULL)));
ALTER TABLE public.ein_tax_ids ADD CONSTRAINT ein_tax_ids_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.ein_tax_ids ADD CONSTRAINT ein_tax_ids_order_id_fkey FOREIGN KEY (order_id) REFERENCES orders(id);
ALTER TABLE public.ein_tax_ids ADD CONSTRAINT ein_tax_ids_pkey PRIMARY KEY (order_id);
ALTER TABLE public.ein_tax_ids ADD CONSTRAINT ein_tax_ids_sealed_check CHECK ((sealed ~~ 'sealed:v1:%'::text));
CREATE INDEX ein_tax_ids_kept ON public.ein_tax_ids USING btree (order_id) WHERE (sealed IS NOT NULL);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.ein_tax_ids TO fcs_service;

CREATE UNLOGGED TABLE public.event_stream_tenants (
    organization_id text NOT NULL,
    environment text NOT NULL,
    hub_id text NOT NULL,
    expires_at timestamp with time zone NOT NULL
);
ALTER TABLE public.event_stream_tenants ADD CONSTRAINT event_stream_tenants_pkey PRIMARY KEY (organization_id, environment, hub_id);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.event_stream_tenants TO fcs_service;

CREATE TABLE public.events (
    id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    type text NOT NULL,
    data jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    xact_id xid8 DEFAULT pg_current_xact_id() NOT NULL,
    traceparent text
);
ALTER TABLE public.events ADD CONSTRAINT events_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.events ADD CONSTRAINT events_pkey PRIMARY KEY (id);
CREATE INDEX events_stream ON public.events USING btree (organization_id, environment, xact_id, id) WITH (deduplicate_items=off);
CREATE INDEX events_tenant ON public.events USING btree (organization_id, environment, id) WITH (deduplicate_items=off);
CREATE INDEX events_tenant_company ON public.events USING btree (organization_id, environment, ((data ->> 'companyId'::text)), id) WITH (deduplicate_items=off);
CREATE INDEX events_tenant_order ON public.events USING btree (organization_id, environment, ((data ->> 'orderId'::text)), id) WITH (deduplicate_items=off);
CREATE INDEX events_tenant_type ON public.events USING btree (organization_id, environment, type, id) WITH (deduplicate_items=off);
CREATE TRIGGER events_append_only BEFORE DELETE OR UPDATE OR TRUNCATE ON public.events FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
GRANT SELECT, INSERT ON TABLE public.events TO fcs_service;

CREATE TABLE public.failed_api_requests (
    id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    api_key_id text NOT NULL,
    method text NOT NULL,
    path text NOT NULL,
    status integer NOT NULL,
    request_id text NOT NULL,
    error_body text,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.failed_api_requests ADD CONSTRAINT failed_api_requests_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.failed_api_requests ADD CONSTRAINT failed_api_requests_error_body_check CHECK ((octet_length(error_body) <= 8192));
ALTER TABLE public.failed_api_requests ADD CONSTRAINT failed_api_requests_method_check CHECK ((length(method) <= 16));
ALTER TABLE public.failed_api_requests ADD CONSTRAINT failed_api_requests_path_check CHECK ((length(path) <= 2048));
ALTER TABLE public.failed_api_requests ADD CONSTRAINT failed_api_requests_pkey PRIMARY KEY (id);
ALTER TABLE public.failed_api_requests ADD CONSTRAINT failed_api_requests_request_id_check CHECK ((length(request_id) <= 64));
ALTER TABLE public.failed_api_requests ADD CONSTRAINT failed_api_requests_status_check CHECK (((status >= 400) AND (status <= 599)));
CREATE INDEX failed_api_requests_created ON public.failed_api_requests USING btree (created_at);
CREATE INDEX failed_api_requests_request ON public.failed_api_requests USING btree (organization_id, environment, request_id);
CREATE INDEX failed_api_requests_tenant ON public.failed_api_requests USING btree (organization_id, environment, id DESC);
CREATE INDEX failed_api_requests_tenant_status ON public.failed_api_requests USING btree (organization_id, environment, status, id DESC);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.failed_api_requests TO fcs_service;

CREATE TABLE public.idempotency_keys (
    organization_id text NOT NULL,
    environment text NOT NULL,
    key text NOT NULL,
    request_hash text NOT NULL,
    status text NOT NULL,
    response_status integer,
    response_body jsonb,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.idempotency_keys ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (organization_id, environment, key);
ALTER TABLE public.idempotency_keys ADD CONSTRAINT idempotency_keys_status_check CHECK ((status = ANY (ARRAY['running'::text, 'done'::text])));
CREATE INDEX idempotency_keys_created ON public.idempotency_keys USING btree (created_at);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.idempotency_keys TO fcs_service;

CREATE TABLE public.instance_settings (
    key text NOT NULL,
    value jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.instance_settings ADD CONSTRAINT instance_settings_pkey PRIMARY KEY (key);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.instance_settings TO fcs_service;

CREATE TABLE public.ledger_checks (
    id bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
    checked_at timestamp with time zone DEFAULT now() NOT NULL,
    differences integer NOT NULL
);
ALTER TABLE public.ledger_checks ADD CONSTRAINT ledger_checks_differences_check CHECK ((differences >= 0));
ALTER TABLE public.ledger_checks ADD CONSTRAINT ledger_checks_pkey PRIMARY KEY (id);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.ledger_checks TO fcs_service;

CREATE TABLE public.ledger_entries (
    id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    type text NOT NULL,
    amount_cents bigint NOT NULL,
    balance_after_cents bigint NOT NULL,
    line_type text,
    description text NOT NULL,
    order_id text,
    reverses_entry_id text,
    created_by text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    reference text
);
ALTER TABLE public.ledger_entries ADD CONSTRAINT ledger_entries_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.ledger_entries ADD CONSTRAINT ledger_entries_no_overdraft CHECK (((amount_cents >= 0) OR (balance_after_cents >= 0) OR (type = 'clawback'::text)));
ALTER TABLE public.ledger_entries ADD CONSTRAINT ledger_entries_pkey PRIMARY KEY (id);
ALTER TABLE public.ledger_entries ADD CONSTRAINT ledger_entries_reverses_entry_id_fkey FOREIGN KEY (reverses_entry_id) REFERENCES ledger_entries(id);
ALTER TABLE public.ledger_entries ADD CONSTRAINT ledger_entries_type_check CHECK ((type = ANY (ARRAY['credit'::text, 'debit'::text, 'reversal'::text, 'clawback'::text])));
CREATE UNIQUE INDEX ledger_entries_one_per_reference ON public.ledger_entries USING btree (type, reference) WHERE (reference IS NOT NULL);
CREATE UNIQUE INDEX ledger_entries_one_reversal ON public.ledger_entries USING btree (reverses_entry_id) WHERE (reverses_entry_id IS NOT NULL);
CREATE INDEX ledger_entries_order ON public.ledger_entries USING btree (order_id) WITH (deduplicate_items=off);
CREATE INDEX ledger_entries_tenant ON public.ledger_entries USING btree (organization_id, environment, id) WITH (deduplicate_items=off);
CREATE INDEX ledger_entries_tenant_recent ON public.ledger_entries USING btree (organization_id, environment, created_at, id) WITH (deduplicate_items=off);
CREATE INDEX ledger_entries_tenant_type_recent ON public.ledger_entries USING btree (organization_id, environment, type, created_at, id) WITH (deduplicate_items=off);
CREATE TRIGGER ledger_entries_append_only BEFORE DELETE OR UPDATE OR TRUNCATE ON public.ledger_entries FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
CREATE TRIGGER ledger_entries_references AFTER INSERT ON public.ledger_entries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION check_ledger_entry_references();
GRANT SELECT, INSERT ON TABLE public.ledger_entries TO fcs_service;

CREATE TABLE public.login_attempts (
    key text NOT NULL,
    succeeded boolean NOT NULL,
    attempted_at timestamp with time zone DEFAULT now() NOT NULL
);
CREATE INDEX login_attempts_key ON public.login_attempts USING btree (key, attempted_at DESC);
CREATE INDEX login_attempts_time ON public.login_attempts USING btree (attempted_at);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.login_attempts TO fcs_service;

CREATE TABLE public.magic_links (
    id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    user_id text NOT NULL,
    company_id text,
    token_hash text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    host text
);
ALTER TABLE public.magic_links ADD CONSTRAINT magic_links_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(id);
ALTER TABLE public.magic_links ADD CONSTRAINT magic_links_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.magic_links ADD CONSTRAINT magic_links_pkey PRIMARY KEY (id);
ALTER TABLE public.magic_links ADD CONSTRAINT magic_links_token_hash_key UNIQUE (token_hash);
ALTER TABLE public.magic_links ADD CONSTRAINT magic_links_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(id);
CREATE INDEX magic_links_user ON public.magic_links USING btree (user_id);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.magic_links TO fcs_service;

CREATE TABLE public.member_recovery_codes (
    member_id text NOT NULL,
    code_hash text NOT NULL,
    used_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.member_recovery_codes ADD CONSTRAINT member_recovery_codes_member_id_fkey FOREIGN KEY (member_id) REFERENCES members(id);
ALTER TABLE public.member_recovery_codes ADD CONSTRAINT member_recovery_codes_pkey PRIMARY KEY (member_id, code_hash);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.member_recovery_codes TO fcs_service;

CREATE TABLE public.members (
    id text NOT NULL,
    email text NOT NULL,
    name text NOT NULL,
    password_hash text NOT NULL,
    totp_sealed text,
    totp_enabled_at timestamp with time zone,
    totp_last_step bigint,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    disabled_at timestamp with time zone
);
ALTER TABLE public.members ADD CONSTRAINT members_check CHECK (((totp_enabled_at IS NULL) OR (totp_sealed IS NOT NULL)));
ALTER TABLE public.members ADD CONSTRAINT members_email_check CHECK (((length(email) >= 3) AND (length(email) <= 254)));
ALTER TABLE public.members ADD CONSTRAINT members_name_check CHECK (((length(btrim(name)) >= 1) AND (length(btrim(name)) <= 200)));
ALTER TABLE public.members ADD CONSTRAINT members_pkey PRIMARY KEY (id);
ALTER TABLE public.members ADD CONSTRAINT members_totp_sealed_check CHECK ((totp_sealed ~~ 'sealed:v1:%'::text));
CREATE UNIQUE INDEX members_email_lower ON public.members USING btree (lower(email));
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.members TO fcs_service;

CREATE TABLE public.operator_sessions (
    id_hash text NOT NULL,
    operator_id text NOT NULL,
    csrf_token text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    revoked_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.operator_sessions ADD CONSTRAINT operator_sessions_operator_id_fkey FOREIGN KEY (operator_id) REFERENCES operators(id);
ALTER TABLE public.operator_sessions ADD CONSTRAINT operator_sessions_pkey PRIMARY KEY (id_hash);
CREATE INDEX operator_sessions_operator ON public.operator_sessions USING btree (operator_id) WHERE (revoked_at IS NULL);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.operator_sessions TO fcs_service;

CREATE TABLE public.operators (
    id text NOT NULL,
    email text NOT NULL,
    name text NOT NULL,
    password_hash text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    disabled_at timestamp with time zone
);
ALTER TABLE public.operators ADD CONSTRAINT operators_email_key UNIQUE (email);
ALTER TABLE public.operators ADD CONSTRAINT operators_pkey PRIMARY KEY (id);
CREATE UNIQUE INDEX operators_email_lower ON public.operators USING btree (lower(email));
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.operators TO fcs_service;

CREATE TABLE public.order_groups (
    id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    user_id text NOT NULL,
    company_id text NOT NULL,
    filing_state text NOT NULL,
    source text NOT NULL,
    billing text NOT NULL,
    request jsonb,
    total_cents bigint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    idempotency_key text
);
ALTER TABLE public.order_groups ADD CONSTRAINT order_groups_billing_check CHECK ((billing = ANY (ARRAY['balance'::text, 'checkout'::text])));
ALTER TABLE public.order_groups ADD CONSTRAINT order_groups_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.order_groups ADD CONSTRAINT order_groups_pkey PRIMARY KEY (id);
ALTER TABLE public.order_groups ADD CONSTRAINT order_groups_source_check CHECK ((source = ANY (ARRAY['api'::text, 'dashboard'::text])));
CREATE UNIQUE INDEX order_groups_idempotency_key ON public.order_groups USING btree (organization_id, environment, idempotency_key) WHERE (idempotency_key IS NOT NULL);
CREATE TRIGGER order_groups_key_fixed BEFORE UPDATE OF id, company_id, filing_state ON public.order_groups FOR EACH ROW WHEN ((((old.id IS DISTINCT FROM new.id) OR (old.company_id IS DISTINCT FROM new.company_id)) OR (old.filing_state IS DISTINCT FROM new.filing_state))) EXECUTE FUNCTION refuse_reference_change();
CREATE TRIGGER order_groups_never_removed BEFORE DELETE OR TRUNCATE ON public.order_groups FOR EACH STATEMENT EXECUTE FUNCTION refuse_reference_delete();
CREATE TRIGGER order_groups_references AFTER INSERT ON public.order_groups REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION check_order_group_references();
GRANT SELECT, INSERT, UPDATE ON TABLE public.order_groups TO fcs_service;

CREATE TABLE public.order_status_history (
    id text NOT NULL,
    order_id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    from_status text,
    to_status text NOT NULL,
    exception_code text,
    exception_message text,
    filing_date date,
    actor text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.order_status_history ADD CONSTRAINT order_status_history_pkey PRIMARY KEY (id);
CREATE INDEX order_status_history_order ON public.order_status_history USING btree (order_id, created_at) WITH (deduplicate_items=off);
CREATE TRIGGER order_status_history_append_only BEFORE DELETE OR UPDATE OR TRUNCATE ON public.order_status_history FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
CREATE TRIGGER order_status_history_references AFTER INSERT ON public.order_status_history REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION check_order_status_history_references();
GRANT SELECT, INSERT ON TABLE public.order_status_history TO fcs_service;

CREATE TABLE public.orders (
    id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    group_id text NOT NULL,
    company_id text NOT NULL,
    user_id text NOT NULL,
    order_type text NOT NULL,
    filing_state text NOT NULL,
    filing_status text DEFAULT 'submitted'::text NOT NULL,
    filing_type text,
    filing_date date,
    subscription_status text,
    exception_code text,
    exception_message text,
    details jsonb DEFAULT '{}'::jsonb NOT NULL,
    billing text NOT NULL,
    amount_cents bigint DEFAULT 0 NOT NULL,
    retail_cents bigint,
    margin_cents bigint,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    current_period_end date
);
ALTER TABLE public.orders ADD CONSTRAINT orders_billing_check CHECK ((billing = ANY (ARRAY['balance'::text, 'checkout'::text])));
ALTER TABLE public.orders ADD CONSTRAINT orders_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.orders ADD CONSTRAINT orders_filing_status_check CHECK ((filing_status = ANY (ARRAY['submitted'::text, 'pending'::text, 'filed'::text, 'exception'::text, 'cancelled'::text])));
ALTER TABLE public.orders ADD CONSTRAINT orders_pkey PRIMARY KEY (id);
ALTER TABLE public.orders ADD CONSTRAINT orders_subscription_status_check CHECK ((subscription_status = ANY (ARRAY['active'::text, 'canceled'::text, 'past_due'::text])));
CREATE INDEX orders_company_type_state ON public.orders USING btree (company_id, order_type, filing_state) WITH (deduplicate_items=off);
CREATE INDEX orders_group ON public.orders USING btree (group_id);
CREATE UNIQUE INDEX orders_one_active_registered_agent ON public.orders USING btree (company_id, filing_state) WHERE ((order_type = 'registered_agent'::text) AND (subscription_status = 'active'::text) AND (filing_status <> 'cancelled'::text));
CREATE UNIQUE INDEX orders_one_ein ON public.orders USING btree (company_id) WHERE ((order_type = 'ein'::text) AND (filing_status <> 'cancelled'::text));
CREATE INDEX orders_queue ON public.orders USING btree (environment, filing_status, created_at) WHERE (filing_status = ANY (ARRAY['submitted'::text, 'pending'::text, 'exception'::text]));
CREATE INDEX orders_queue_order ON public.orders USING btree (environment, created_at, id) WITH (deduplicate_items=off) WHERE (filing_status = ANY (ARRAY['submitted'::text, 'pending'::text, 'exception'::text]));
CREATE INDEX orders_subscription_due ON public.orders USING btree (current_period_end) WHERE ((subscription_status = ANY (ARRAY['active'::text, 'past_due'::text])) AND (current_period_end IS NOT NULL));
CREATE INDEX orders_tenant_recent ON public.orders USING btree (organization_id, environment, created_at, id) WITH (deduplicate_items=off);
CREATE INDEX orders_tenant_state_recent ON public.orders USING btree (organization_id, environment, filing_state, created_at, id) WITH (deduplicate_items=off);
CREATE INDEX orders_tenant_status_recent ON public.orders USING btree (organization_id, environment, filing_status, created_at, id) WITH (deduplicate_items=off);
CREATE INDEX orders_tenant_type_recent ON public.orders USING btree (organization_id, environment, order_type, created_at, id) WITH (deduplicate_items=off);
CREATE INDEX orders_tenant_user_recent ON public.orders USING btree (organization_id, environment, user_id, created_at, id) WITH (deduplicate_items=off);
CREATE TRIGGER orders_key_fixed BEFORE UPDATE OF id, group_id, company_id, filing_state ON public.orders FOR EACH ROW WHEN (((((old.id IS DISTINCT FROM new.id) OR (old.group_id IS DISTINCT FROM new.group_id)) OR (old.company_id IS DISTINCT FROM new.company_id)) OR (old.filing_state IS DISTINCT FROM new.filing_state))) EXECUTE FUNCTION refuse_reference_change();
CREATE TRIGGER orders_never_removed BEFORE DELETE OR TRUNCATE ON public.orders FOR EACH STATEMENT EXECUTE FUNCTION refuse_reference_delete();
CREATE TRIGGER orders_references AFTER INSERT ON public.orders REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION check_order_references();
GRANT SELECT, INSERT, UPDATE ON TABLE public.orders TO fcs_service;

CREATE TABLE public.organization_memberships (
    organization_id text NOT NULL,
    member_id text NOT NULL,
    role text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.organization_memberships ADD CONSTRAINT organization_memberships_member_id_fkey FOREIGN KEY (member_id) REFERENCES members(id);
ALTER TABLE public.organization_memberships ADD CONSTRAINT organization_memberships_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.organization_memberships ADD CONSTRAINT organization_memberships_pkey PRIMARY KEY (organization_id, member_id);
ALTER TABLE public.organization_memberships ADD CONSTRAINT organization_memberships_role_check CHECK ((role = ANY (ARRAY['owner'::text, 'admin'::text, 'developer'::text, 'viewer'::text])));
CREATE INDEX organization_memberships_member ON public.organization_memberships USING btree (member_id);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.organization_memberships TO fcs_service;

CREATE TABLE public.organization_prices (
    organization_id text NOT NULL,
    environment text NOT NULL,
    type text NOT NULL,
    retail_amount_cents bigint,
    enabled boolean DEFAULT true NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.organization_prices ADD CONSTRAINT organization_prices_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.organization_prices ADD CONSTRAINT organization_prices_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.organization_prices ADD CONSTRAINT organization_prices_pkey PRIMARY KEY (organization_id, environment, type);
ALTER TABLE public.organization_prices ADD CONSTRAINT organization_prices_retail_amount_cents_check CHECK ((retail_amount_cents >= 0));
ALTER TABLE public.organization_prices ADD CONSTRAINT organization_prices_type_fkey FOREIGN KEY (type) REFERENCES price_catalog(type);
CREATE TRIGGER organization_prices_changed AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.organization_prices FOR EACH STATEMENT EXECUTE FUNCTION notify_pricing_changed();
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.organization_prices TO fcs_service;

CREATE TABLE public.organization_wholesale_prices (
    organization_id text NOT NULL,
    type text NOT NULL,
    wholesale_amount_cents bigint NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.organization_wholesale_prices ADD CONSTRAINT organization_wholesale_prices_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.organization_wholesale_prices ADD CONSTRAINT organization_wholesale_prices_pkey PRIMARY KEY (organization_id, type);
ALTER TABLE public.organization_wholesale_prices ADD CONSTRAINT organization_wholesale_prices_type_fkey FOREIGN KEY (type) REFERENCES price_catalog(type);
ALTER TABLE public.organization_wholesale_prices ADD CONSTRAINT organization_wholesale_prices_wholesale_amount_cents_check CHECK ((wholesale_amount_cents >= 0));
CREATE TRIGGER organization_wholesale_prices_changed AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.organization_wholesale_prices FOR EACH STATEMENT EXECUTE FUNCTION notify_pricing_changed();
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.organization_wholesale_prices TO fcs_service;

CREATE TABLE public.organizations (
    id text NOT NULL,
    name text NOT NULL,
    white_label_domain text,
    branding jsonb DEFAULT '{}'::jsonb NOT NULL,
    email_notifications boolean DEFAULT true NOT NULL,
    dashboard_billing text DEFAULT 'organization'::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    contact_email text,
    white_label_domain_token text,
    white_label_domain_verified_at timestamp with time zone,
    white_label_domain_vouched boolean DEFAULT false NOT NULL,
    white_label_domain_lapsed_at timestamp with time zone,
    low_balance_threshold_cents bigint
);
ALTER TABLE public.organizations ADD CONSTRAINT organizations_contact_email_check CHECK (((length(contact_email) >= 3) AND (length(contact_email) <= 254)));
ALTER TABLE public.organizations ADD CONSTRAINT organizations_dashboard_billing_check CHECK ((dashboard_billing = ANY (ARRAY['organization'::text, 'customer'::text])));
ALTER TABLE public.organizations ADD CONSTRAINT organizations_low_balance_threshold_cents_check CHECK ((low_balance_threshold_cents >= 0));
ALTER TABLE public.organizations ADD CONSTRAINT organizations_name_check CHECK ((length(name) > 0));
ALTER TABLE public.organizations ADD CONSTRAINT organizations_pkey PRIMARY KEY (id);
ALTER TABLE public.organizations ADD CONSTRAINT organizations_white_label_domain_token CHECK (((white_label_domain IS NULL) OR (white_label_domain_token IS NOT NULL)));
CREATE UNIQUE INDEX organizations_verified_white_label_domain ON public.organizations USING btree (white_label_domain) WHERE (white_label_domain_verified_at IS NOT NULL);
CREATE INDEX organizations_white_label_domain ON public.organizations USING btree (white_label_domain);
CREATE TRIGGER organizations_truncated AFTER TRUNCATE ON public.organizations FOR EACH STATEMENT EXECUTE FUNCTION notify_white_label_domains_changed();
CREATE TRIGGER organizations_white_label_domain_changed AFTER UPDATE OF white_label_domain, white_label_domain_verified_at ON public.organizations FOR EACH ROW WHEN ((((old.white_label_domain_verified_at IS NOT NULL) OR (new.white_label_domain_verified_at IS NOT NULL)) AND ((old.white_label_domain IS DISTINCT FROM new.white_label_domain) OR (old.white_label_domain_verified_at IS DISTINCT FROM new.white_label_domain_verified_at)))) EXECUTE FUNCTION notify_white_label_domains_changed();
CREATE TRIGGER organizations_white_label_domain_deleted AFTER DELETE ON public.organizations FOR EACH ROW WHEN ((old.white_label_domain_verified_at IS NOT NULL)) EXECUTE FUNCTION notify_white_label_domains_changed();
CREATE TRIGGER organizations_white_label_domain_inserted AFTER INSERT ON public.organizations FOR EACH ROW WHEN ((new.white_label_domain_verified_at IS NOT NULL)) EXECUTE FUNCTION notify_white_label_domains_changed();
CREATE TRIGGER organizations_white_label_domain_retired AFTER UPDATE OF white_label_domain ON public.organizations FOR EACH ROW WHEN (((old.white_label_domain IS NOT NULL) AND (old.white_label_domain IS DISTINCT FROM new.white_label_domain))) EXECUTE FUNCTION revoke_sessions_of_retired_domain();
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.organizations TO fcs_service;

CREATE TABLE public.payment_provider_events (
    id text NOT NULL,
    provider text NOT NULL,
    type text NOT NULL,
    checkout_id text,
    received_at timestamp with time zone DEFAULT now() NOT NULL,
    top_up_id text
);
ALTER TABLE public.payment_provider_events ADD CONSTRAINT payment_provider_events_checkout_id_fkey FOREIGN KEY (checkout_id) REFERENCES card_checkouts(id);
ALTER TABLE public.payment_provider_events ADD CONSTRAINT payment_provider_events_pkey PRIMARY KEY (id);
ALTER TABLE public.payment_provider_events ADD CONSTRAINT payment_provider_events_top_up_id_fkey FOREIGN KEY (top_up_id) REFERENCES top_ups(id);
CREATE TRIGGER payment_provider_events_append_only BEFORE DELETE OR UPDATE OR TRUNCATE ON public.payment_provider_events FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
GRANT SELECT, INSERT ON TABLE public.payment_provider_events TO fcs_service;

CREATE TABLE public.payment_statuses (
    id bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
    payment_id text NOT NULL,
    status text NOT NULL,
    message text,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.payment_statuses ADD CONSTRAINT payment_statuses_payment_id_fkey FOREIGN KEY (payment_id) REFERENCES payments(id);
ALTER TABLE public.payment_statuses ADD CONSTRAINT payment_statuses_pkey PRIMARY KEY (id);
ALTER TABLE public.payment_statuses ADD CONSTRAINT payment_statuses_status_check CHECK ((status = ANY (ARRAY['succeeded'::text, 'declined'::text, 'refunded'::text])));
CREATE INDEX payment_statuses_payment ON public.payment_statuses USING btree (payment_id, id);
CREATE TRIGGER payment_statuses_append_only BEFORE DELETE OR UPDATE OR TRUNCATE ON public.payment_statuses FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
GRANT SELECT, INSERT ON TABLE public.payment_statuses TO fcs_service;

CREATE TABLE public.payments (
    id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    group_id text,
    provider text NOT NULL,
    amount_cents bigint NOT NULL,
    status text NOT NULL,
    card_last4 text,
    failure_message text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    user_id text,
    company_id text,
    provider_reference text,
    refunded_at timestamp with time zone
);
ALTER TABLE public.payments ADD CONSTRAINT payments_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies(id);
ALTER TABLE public.payments ADD CONSTRAINT payments_group_id_fkey FOREIGN KEY (group_id) REFERENCES order_groups(id);
ALTER TABLE public.payments ADD CONSTRAINT payments_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.payments ADD CONSTRAINT payments_pkey PRIMARY KEY (id);
ALTER TABLE public.payments ADD CONSTRAINT payments_status_check CHECK ((status = ANY (ARRAY['succeeded'::text, 'declined'::text, 'refunded'::text])));
ALTER TABLE public.payments ADD CONSTRAINT payments_user_id_fkey FOREIGN KEY (user_id) REFERENCES users(id);
CREATE INDEX payments_group ON public.payments USING btree (group_id);
CREATE INDEX payments_tenant ON public.payments USING btree (organization_id, environment, created_at DESC);
CREATE TRIGGER payments_append_only BEFORE DELETE OR UPDATE OR TRUNCATE ON public.payments FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
CREATE TRIGGER payments_first_status AFTER INSERT ON public.payments FOR EACH ROW EXECUTE FUNCTION payments_first_status();
COMMENT ON COLUMN public.payments.status IS 'the status the payment was recorded with; its status now is payment_status(id), the newest payment_statuses row';
GRANT SELECT, INSERT ON TABLE public.payments TO fcs_service;

CREATE TABLE public.portal_invitations (
    id text NOT NULL,
    organization_id text NOT NULL,
    email text NOT NULL,
    role text NOT NULL,
    token_hash text NOT NULL,
    invited_by text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    accepted_at timestamp with time zone,
    accepted_by text,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.portal_invitations ADD CONSTRAINT portal_invitations_accepted_by_fkey FOREIGN KEY (accepted_by) REFERENCES members(id) DEFERRABLE INITIALLY DEFERRED;
ALTER TABLE public.portal_invitations ADD CONSTRAINT portal_invitations_check CHECK (((accepted_at IS NULL) = (accepted_by IS NULL)));
ALTER TABLE public.portal_invitations ADD CONSTRAINT portal_invitations_email_check CHECK (((length(email) >= 3) AND (length(email) <= 254)));
ALTER TABLE public.portal_invitations ADD CONSTRAINT portal_invitations_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.portal_invitations ADD CONSTRAINT portal_invitations_pkey PRIMARY KEY (id);
ALTER TABLE public.portal_invitations ADD CONSTRAINT portal_invitations_role_check CHECK ((role = ANY (ARRAY['owner'::text, 'admin'::text, 'developer'::text, 'viewer'::text])));
ALTER TABLE public.portal_invitations ADD CONSTRAINT portal_invitations_token_hash_key UNIQUE (token_hash);
CREATE INDEX portal_invitations_organization ON public.portal_invitations USING btree (organization_id, created_at DESC);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.portal_invitations TO fcs_service;

CREATE TABLE public.portal_password_resets (
    id text NOT NULL,
    member_id text NOT NULL,
    token_hash text NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.portal_password_resets ADD CONSTRAINT portal_password_resets_member_id_fkey FOREIGN KEY (member_id) REFERENCES members(id);
ALTER TABLE public.portal_password_resets ADD CONSTRAINT portal_password_resets_pkey PRIMARY KEY (id);
ALTER TABLE public.portal_password_resets ADD CONSTRAINT portal_password_resets_token_hash_key UNIQUE (token_hash);
CREATE INDEX portal_password_resets_member ON public.portal_password_resets USING btree (member_id) WHERE (used_at IS NULL);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.portal_password_resets TO fcs_service;

CREATE TABLE public.portal_secret_views (
    id text NOT NULL,
    session_hash text NOT NULL,
    kind text NOT NULL,
    sealed text NOT NULL,
    expires_at timestamp with time zone NOT NULL
);
ALTER TABLE public.portal_secret_views ADD CONSTRAINT portal_secret_views_kind_check CHECK ((kind = ANY (ARRAY['api_key'::text, 'webhook_secret'::text, 'recovery_codes'::text])));
ALTER TABLE public.portal_secret_views ADD CONSTRAINT portal_secret_views_pkey PRIMARY KEY (id);
ALTER TABLE public.portal_secret_views ADD CONSTRAINT portal_secret_views_session_hash_fkey FOREIGN KEY (session_hash) REFERENCES portal_sessions(id_hash);
CREATE INDEX portal_secret_views_expiry ON public.portal_secret_views USING btree (expires_at);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.portal_secret_views TO fcs_service;

CREATE TABLE public.portal_sessions (
    id_hash text NOT NULL,
    id text NOT NULL,
    member_id text NOT NULL,
    csrf_token text NOT NULL,
    second_factor_pending boolean NOT NULL,
    second_factor_at timestamp with time zone,
    organization_id text,
    environment text DEFAULT 'test'::text NOT NULL,
    client_address text NOT NULL,
    user_agent text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_seen_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    revoked_at timestamp with time zone
);
ALTER TABLE public.portal_sessions ADD CONSTRAINT portal_sessions_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.portal_sessions ADD CONSTRAINT portal_sessions_id_key UNIQUE (id);
ALTER TABLE public.portal_sessions ADD CONSTRAINT portal_sessions_member_id_fkey FOREIGN KEY (member_id) REFERENCES members(id);
ALTER TABLE public.portal_sessions ADD CONSTRAINT portal_sessions_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.portal_sessions ADD CONSTRAINT portal_sessions_pkey PRIMARY KEY (id_hash);
CREATE INDEX portal_sessions_member ON public.portal_sessions USING btree (member_id, created_at DESC) WHERE (revoked_at IS NULL);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.portal_sessions TO fcs_service;

CREATE TABLE public.price_catalog (
    type text NOT NULL,
    name text NOT NULL,
    description text NOT NULL,
    default_amount_cents bigint NOT NULL,
    wholesale_amount_cents bigint NOT NULL,
    sort_order integer NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.price_catalog ADD CONSTRAINT price_catalog_default_amount_cents_check CHECK ((default_amount_cents >= 0));
ALTER TABLE public.price_catalog ADD CONSTRAINT price_catalog_pkey PRIMARY KEY (type);
ALTER TABLE public.price_catalog ADD CONSTRAINT price_catalog_wholesale_amount_cents_check CHECK ((wholesale_amount_cents >= 0));
CREATE TRIGGER price_catalog_changed AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.price_catalog FOR EACH STATEMENT EXECUTE FUNCTION notify_pricing_changed();
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.price_catalog TO fcs_service;

CREATE UNLOGGED TABLE public.rate_limit_counters (
    bucket text NOT NULL,
    window_start bigint NOT NULL,
    hits integer NOT NULL,
    expires_at timestamp with time zone NOT NULL
);
ALTER TABLE public.rate_limit_counters ADD CONSTRAINT rate_limit_counters_pkey PRIMARY KEY (bucket, window_start);
CREATE INDEX rate_limit_counters_expires ON public.rate_limit_counters USING btree (expires_at);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.rate_limit_counters TO fcs_service;

CREATE TABLE public.schema_migrations (
    version bigint NOT NULL,
    name text,
    md5 text,
    run_at timestamp with time zone
);
ALTER TABLE public.schema_migrations ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);
GRANT SELECT ON TABLE public.schema_migrations TO fcs_service;

CREATE TABLE public.schema_repeatables (
    id smallint DEFAULT 1 NOT NULL,
    files_sha256 text NOT NULL,
    catalog_md5 text NOT NULL,
    migration_version integer NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.schema_repeatables ADD CONSTRAINT schema_repeatables_id_check CHECK ((id = 1));
ALTER TABLE public.schema_repeatables ADD CONSTRAINT schema_repeatables_pkey PRIMARY KEY (id);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.schema_repeatables TO fcs_service;

CREATE TABLE public.state_fees (
    state text NOT NULL,
    name text NOT NULL,
    llc_formation_cents bigint NOT NULL,
    corp_formation_cents bigint NOT NULL,
    llc_foreign_cents bigint NOT NULL,
    corp_foreign_cents bigint NOT NULL,
    llc_annual_report_cents bigint NOT NULL,
    corp_annual_report_cents bigint NOT NULL,
    expedited_formation_cents bigint,
    source jsonb DEFAULT '{}'::jsonb NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_by text
);
ALTER TABLE public.state_fees ADD CONSTRAINT state_fees_pkey PRIMARY KEY (state);
CREATE TRIGGER state_fees_changed AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON public.state_fees FOR EACH STATEMENT EXECUTE FUNCTION notify_pricing_changed();
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.state_fees TO fcs_service;

CREATE TABLE public.subscription_renewals (
    id text NOT NULL,
    order_id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    period_start date NOT NULL,
    period_end date NOT NULL,
    amount_cents bigint NOT NULL,
    ledger_entry_ids text[] NOT NULL,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.subscription_renewals ADD CONSTRAINT subscription_renewals_amount_cents_check CHECK ((amount_cents >= 0));
ALTER TABLE public.subscription_renewals ADD CONSTRAINT subscription_renewals_check CHECK ((period_end > period_start));
ALTER TABLE public.subscription_renewals ADD CONSTRAINT subscription_renewals_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.subscription_renewals ADD CONSTRAINT subscription_renewals_order_id_fkey FOREIGN KEY (order_id) REFERENCES orders(id);
ALTER TABLE public.subscription_renewals ADD CONSTRAINT subscription_renewals_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.subscription_renewals ADD CONSTRAINT subscription_renewals_period_unique UNIQUE (order_id, period_start);
ALTER TABLE public.subscription_renewals ADD CONSTRAINT subscription_renewals_pkey PRIMARY KEY (id);
CREATE INDEX subscription_renewals_tenant ON public.subscription_renewals USING btree (organization_id, environment, created_at DESC);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.subscription_renewals TO fcs_service;

CREATE TABLE public.subscription_status_changes (
    id text NOT NULL,
    order_id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    from_status text,
    to_status text NOT NULL,
    reason text NOT NULL,
    detail jsonb DEFAULT '{}'::jsonb NOT NULL,
    event_id text,
    actor text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.subscription_status_changes ADD CONSTRAINT subscription_status_changes_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.subscription_status_changes ADD CONSTRAINT subscription_status_changes_event_id_fkey FOREIGN KEY (event_id) REFERENCES events(id);
ALTER TABLE public.subscription_status_changes ADD CONSTRAINT subscription_status_changes_order_id_fkey FOREIGN KEY (order_id) REFERENCES orders(id);
ALTER TABLE public.subscription_status_changes ADD CONSTRAINT subscription_status_changes_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.subscription_status_changes ADD CONSTRAINT subscription_status_changes_pkey PRIMARY KEY (id);
ALTER TABLE public.subscription_status_changes ADD CONSTRAINT subscription_status_changes_to_status_check CHECK ((to_status = ANY (ARRAY['active'::text, 'canceled'::text, 'past_due'::text])));
CREATE INDEX subscription_status_changes_order ON public.subscription_status_changes USING btree (order_id, created_at);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.subscription_status_changes TO fcs_service;

CREATE TABLE public.tax_id_reveals (
    id text NOT NULL,
    order_id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    actor text NOT NULL,
    reason text NOT NULL,
    client_address text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.tax_id_reveals ADD CONSTRAINT tax_id_reveals_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.tax_id_reveals ADD CONSTRAINT tax_id_reveals_order_id_fkey FOREIGN KEY (order_id) REFERENCES orders(id);
ALTER TABLE public.tax_id_reveals ADD CONSTRAINT tax_id_reveals_pkey PRIMARY KEY (id);
ALTER TABLE public.tax_id_reveals ADD CONSTRAINT tax_id_reveals_reason_check CHECK (((length(btrim(reason)) >= 1) AND (length(btrim(reason)) <= 500)));
CREATE INDEX tax_id_reveals_order ON public.tax_id_reveals USING btree (order_id, created_at);
CREATE TRIGGER tax_id_reveals_append_only BEFORE DELETE OR UPDATE OR TRUNCATE ON public.tax_id_reveals FOR EACH STATEMENT EXECUTE FUNCTION refuse_append_only_change();
GRANT SELECT, INSERT ON TABLE public.tax_id_reveals TO fcs_service;

CREATE TABLE public.top_ups (
    id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    amount_cents bigint NOT NULL,
    provider text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    provider_session_id text,
    checkout_url text,
    payment_intent text,
    idempotency_key text,
    failure_message text,
    disputed_cents bigint DEFAULT 0 NOT NULL,
    refunded_cents bigint DEFAULT 0 NOT NULL,
    succeeded_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.top_ups ADD CONSTRAINT top_ups_amount_cents_check CHECK ((amount_cents > 0));
ALTER TABLE public.top_ups ADD CONSTRAINT top_ups_check CHECK (((status = 'succeeded'::text) = (succeeded_at IS NOT NULL)));
ALTER TABLE public.top_ups ADD CONSTRAINT top_ups_check1 CHECK (((disputed_cents + refunded_cents) <= amount_cents));
ALTER TABLE public.top_ups ADD CONSTRAINT top_ups_disputed_cents_check CHECK ((disputed_cents >= 0));
ALTER TABLE public.top_ups ADD CONSTRAINT top_ups_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.top_ups ADD CONSTRAINT top_ups_organization_id_environment_idempotency_key_key UNIQUE (organization_id, environment, idempotency_key);
ALTER TABLE public.top_ups ADD CONSTRAINT top_ups_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.top_ups ADD CONSTRAINT top_ups_pkey PRIMARY KEY (id);
ALTER TABLE public.top_ups ADD CONSTRAINT top_ups_provider_check CHECK ((provider = ANY (ARRAY['stripe'::text, 'test'::text])));
ALTER TABLE public.top_ups ADD CONSTRAINT top_ups_provider_session_id_key UNIQUE (provider_session_id);
ALTER TABLE public.top_ups ADD CONSTRAINT top_ups_refunded_cents_check CHECK ((refunded_cents >= 0));
ALTER TABLE public.top_ups ADD CONSTRAINT top_ups_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'processing'::text, 'succeeded'::text, 'failed'::text, 'expired'::text])));
CREATE INDEX top_ups_payment_intent ON public.top_ups USING btree (payment_intent) WHERE (payment_intent IS NOT NULL);
CREATE INDEX top_ups_tenant ON public.top_ups USING btree (organization_id, environment, id DESC);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.top_ups TO fcs_service;

CREATE TABLE public.users (
    id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    full_name text NOT NULL,
    email text NOT NULL,
    email_normalized text NOT NULL,
    phone_number text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);
ALTER TABLE public.users ADD CONSTRAINT users_email_unique UNIQUE (organization_id, environment, email_normalized);
ALTER TABLE public.users ADD CONSTRAINT users_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.users ADD CONSTRAINT users_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.users ADD CONSTRAINT users_pkey PRIMARY KEY (id);
CREATE TRIGGER users_key_fixed BEFORE UPDATE OF id ON public.users FOR EACH ROW WHEN ((old.id IS DISTINCT FROM new.id)) EXECUTE FUNCTION refuse_reference_change();
CREATE TRIGGER users_never_removed BEFORE DELETE OR TRUNCATE ON public.users FOR EACH STATEMENT EXECUTE FUNCTION refuse_reference_delete();
GRANT SELECT, INSERT, UPDATE ON TABLE public.users TO fcs_service;

CREATE TABLE public.webhook_attempts (
    id text NOT NULL,
    delivery_id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    attempt_number integer NOT NULL,
    url text NOT NULL,
    status_code integer,
    duration_ms integer NOT NULL,
    response_body text,
    error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    response_headers jsonb
);
ALTER TABLE public.webhook_attempts ADD CONSTRAINT webhook_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries(id);
ALTER TABLE public.webhook_attempts ADD CONSTRAINT webhook_attempts_pkey PRIMARY KEY (id);
CREATE UNIQUE INDEX webhook_attempts_delivery_number ON public.webhook_attempts USING btree (delivery_id, attempt_number);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.webhook_attempts TO fcs_service;

CREATE TABLE public.webhook_deliveries (
    id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    endpoint_id text NOT NULL,
    event_id text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    attempt_count integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone,
    last_attempt_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    failure_reason text,
    auto_retry boolean DEFAULT true NOT NULL,
    leased_until timestamp with time zone,
    leased_by text
);
ALTER TABLE public.webhook_deliveries SET (fillfactor=70);
ALTER TABLE public.webhook_deliveries ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints(id);
ALTER TABLE public.webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES events(id);
ALTER TABLE public.webhook_deliveries ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id);
ALTER TABLE public.webhook_deliveries ADD CONSTRAINT webhook_deliveries_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'succeeded'::text, 'failed'::text])));
CREATE INDEX webhook_deliveries_due ON public.webhook_deliveries USING btree (endpoint_id, next_attempt_at) WHERE (status = 'pending'::text);
CREATE INDEX webhook_deliveries_endpoint ON public.webhook_deliveries USING btree (endpoint_id, id) WITH (deduplicate_items=off);
CREATE INDEX webhook_deliveries_event ON public.webhook_deliveries USING btree (event_id);
CREATE INDEX webhook_deliveries_tenant ON public.webhook_deliveries USING btree (organization_id, environment, id) WITH (deduplicate_items=off);
CREATE INDEX webhook_deliveries_tenant_status ON public.webhook_deliveries USING btree (organization_id, environment, status, id) WITH (deduplicate_items=off);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.webhook_deliveries TO fcs_service;

CREATE TABLE public.webhook_endpoints (
    id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    url text NOT NULL,
    event_types text[] NOT NULL,
    secret text NOT NULL,
    previous_secret text,
    previous_secret_expires_at timestamp with time zone,
    disabled boolean DEFAULT false NOT NULL,
    disabled_reason text,
    failing_since timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    deleted_at timestamp with time zone,
    description text
);
ALTER TABLE public.webhook_endpoints ADD CONSTRAINT webhook_endpoints_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.webhook_endpoints ADD CONSTRAINT webhook_endpoints_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id);
ALTER TABLE public.webhook_endpoints ADD CONSTRAINT webhook_endpoints_pkey PRIMARY KEY (id);
CREATE INDEX webhook_endpoints_tenant ON public.webhook_endpoints USING btree (organization_id, environment) WHERE (deleted_at IS NULL);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.webhook_endpoints TO fcs_service;

CREATE TABLE public.webhook_recoveries (
    id text NOT NULL,
    organization_id text NOT NULL,
    environment text NOT NULL,
    endpoint_id text NOT NULL,
    since timestamp with time zone NOT NULL,
    requested_by text NOT NULL,
    state text DEFAULT 'queued'::text NOT NULL,
    total integer,
    done integer DEFAULT 0 NOT NULL,
    skipped integer DEFAULT 0 NOT NULL,
    cursor text,
    error text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone
);
ALTER TABLE public.webhook_recoveries ADD CONSTRAINT webhook_recoveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints(id);
ALTER TABLE public.webhook_recoveries ADD CONSTRAINT webhook_recoveries_environment_check CHECK ((environment = ANY (ARRAY['live'::text, 'test'::text])));
ALTER TABLE public.webhook_recoveries ADD CONSTRAINT webhook_recoveries_pkey PRIMARY KEY (id);
ALTER TABLE public.webhook_recoveries ADD CONSTRAINT webhook_recoveries_state_check CHECK ((state = ANY (ARRAY['queued'::text, 'running'::text, 'done'::text, 'failed'::text])));
CREATE INDEX webhook_recoveries_tenant ON public.webhook_recoveries USING btree (organization_id, environment, id DESC);
GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE public.webhook_recoveries TO fcs_service;

CREATE SEQUENCE public.company_calendar_override_changes_id_seq AS bigint START 1 INCREMENT 1 MINVALUE 1 MAXVALUE 9223372036854775807 CACHE 1;
ALTER SEQUENCE public.company_calendar_override_changes_id_seq OWNED BY public.company_calendar_override_changes.id;
GRANT SELECT, UPDATE, USAGE ON SEQUENCE public.company_calendar_override_changes_id_seq TO fcs_service;
CREATE SEQUENCE public.compliance_rule_changes_id_seq AS bigint START 1 INCREMENT 1 MINVALUE 1 MAXVALUE 9223372036854775807 CACHE 1;
ALTER SEQUENCE public.compliance_rule_changes_id_seq OWNED BY public.compliance_rule_changes.id;
GRANT SELECT, UPDATE, USAGE ON SEQUENCE public.compliance_rule_changes_id_seq TO fcs_service;
GRANT SELECT, UPDATE, USAGE ON SEQUENCE public.ledger_checks_id_seq TO fcs_service;
GRANT SELECT, UPDATE, USAGE ON SEQUENCE public.payment_statuses_id_seq TO fcs_service;

CREATE OR REPLACE FUNCTION public.alert_low_balance()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_threshold bigint;
  v_event_id text;
BEGIN
  SELECT o.low_balance_threshold_cents INTO v_threshold FROM organizations o WHERE o.id = NEW.organization_id;
  IF v_threshold IS NOT NULL AND OLD.balance_cents >= v_threshold AND NEW.balance_cents < v_threshold THEN
    v_event_id := new_id('evt');
    PERFORM emit_events(NEW.organization_id, NEW.environment, jsonb_build_array(jsonb_build_object(
      'id', v_event_id,
      'type', 'balance.low',
      'data', jsonb_build_object('balance', round(NEW.balance_cents / 100.0, 2),
                                 'threshold', round(v_threshold / 100.0, 2),
                                 'balanceTransactionId', NEW.last_entry_id))));
    -- FUND-28: the billing contacts hear of a crossing of the live balance only; the test balance alerts by event.
    IF NEW.environment = 'live' THEN
      PERFORM graphile_worker.add_job('send_low_balance_email', json_build_object('eventId', v_event_id),
                                      max_attempts => 12, job_key => 'balance-low:' || v_event_id);
    END IF;
  END IF;
  RETURN NULL;
END
$function$;
GRANT EXECUTE ON FUNCTION public.alert_low_balance() TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.alert_low_balance() TO fcs_service;

CREATE OR REPLACE FUNCTION public.card_refunds_within_payment()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
  paid bigint;
  refunded bigint;
BEGIN
  SELECT amount_cents INTO paid FROM payments WHERE id = NEW.payment_id FOR UPDATE;
  SELECT coalesce(sum(amount_cents), 0) INTO refunded FROM card_refunds WHERE payment_id = NEW.payment_id;
  IF refunded > paid THEN
    RAISE EXCEPTION 'refunds of payment % (% cents) exceed what it collected (% cents)', NEW.payment_id, refunded, paid
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END
$function$;
GRANT EXECUTE ON FUNCTION public.card_refunds_within_payment() TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.card_refunds_within_payment() TO fcs_service;

CREATE OR REPLACE FUNCTION public.check_company_admin_references()
 RETURNS trigger
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
 SET enable_seqscan TO 'off'
AS $function$
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows n WHERE NOT EXISTS (SELECT 1 FROM companies c WHERE c.id = n.company_id)) THEN
    PERFORM refuse_missing_reference('company_admins', 'company_admins_company_id_fkey');
  END IF;
  IF EXISTS (SELECT 1 FROM new_rows n WHERE NOT EXISTS (SELECT 1 FROM users u WHERE u.id = n.user_id)) THEN
    PERFORM refuse_missing_reference('company_admins', 'company_admins_user_id_fkey');
  END IF;
  RETURN NULL;
END
$function$;
GRANT EXECUTE ON FUNCTION public.check_company_admin_references() TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.check_company_admin_references() TO fcs_service;

CREATE OR REPLACE FUNCTION public.check_ledger_entry_references()
 RETURNS trigger
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
 SET enable_seqscan TO 'off'
AS $function$
BEGIN
  IF EXISTS (SELECT 1 FROM (SELECT DISTINCT n.order_id FROM new_rows n WHERE n.order_id IS NOT NULL) n
              WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.id = n.order_id)) THEN
    PERFORM refuse_missing_reference('ledger_entries', 'ledger_entries_order_id_fkey');
  END IF;
  IF EXISTS (SELECT 1 FROM (SELECT DISTINCT n.organization_id, n.environment FROM new_rows n) n
              WHERE NOT EXISTS (SELECT 1 FROM balances b
                                 WHERE b.organization_id = n.organization_id AND b.environment = n.environment)) THEN
    PERFORM refuse_missing_reference('ledger_entries', 'ledger_entries_balance_fkey');
  END IF;
  RETURN NULL;
END
$function$;
GRANT EXECUTE ON FUNCTION public.check_ledger_entry_references() TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.check_ledger_entry_references() TO fcs_service;

CREATE OR REPLACE FUNCTION public.check_order_group_references()
 RETURNS trigger
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
 SET enable_seqscan TO 'off'
AS $function$
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows n WHERE NOT EXISTS (SELECT 1 FROM companies c WHERE c.id = n.company_id)) THEN
    PERFORM refuse_missing_reference('order_groups', 'order_groups_company_id_fkey');
  END IF;
  RETURN NULL;
END
$function$;
GRANT EXECUTE ON FUNCTION public.check_order_group_references() TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.check_order_group_references() TO fcs_service;

CREATE OR REPLACE FUNCTION public.check_order_references()
 RETURNS trigger
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
 SET enable_seqscan TO 'off'
AS $function$
BEGIN
  IF EXISTS (SELECT 1 FROM (SELECT DISTINCT n.group_id, n.company_id, n.filing_state FROM new_rows n) n
              WHERE NOT EXISTS (SELECT 1 FROM order_groups g
                                 WHERE g.id = n.group_id AND g.company_id = n.company_id
                                   AND g.filing_state = n.filing_state)) THEN
    PERFORM refuse_missing_reference('orders', 'orders_group_fkey');
  END IF;
  RETURN NULL;
END
$function$;
GRANT EXECUTE ON FUNCTION public.check_order_references() TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.check_order_references() TO fcs_service;

CREATE OR REPLACE FUNCTION public.check_order_status_history_references()
 RETURNS trigger
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_hashjoin TO 'off'
 SET enable_mergejoin TO 'off'
 SET enable_seqscan TO 'off'
AS $function$
BEGIN
  IF EXISTS (SELECT 1 FROM new_rows n WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.id = n.order_id)) THEN
    PERFORM refuse_missing_reference('order_status_history', 'order_status_history_order_id_fkey');
  END IF;
  RETURN NULL;
END
$function$;
GRANT EXECUTE ON FUNCTION public.check_order_status_history_references() TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.check_order_status_history_references() TO fcs_service;

CREATE OR REPLACE FUNCTION public.emit_events(p_org text, p_env text, p_events jsonb)
 RETURNS TABLE(id text, created_at timestamp with time zone)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
BEGIN
  RETURN QUERY SELECT e.id, e.created_at
    FROM emit_events_of_tenants(jsonb_build_array(
           jsonb_build_object('organization_id', p_org, 'environment', p_env, 'events', p_events))) AS e;
END
$function$;
GRANT EXECUTE ON FUNCTION public.emit_events(p_org text, p_env text, p_events jsonb) TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.emit_events(p_org text, p_env text, p_events jsonb) TO fcs_service;

CREATE OR REPLACE FUNCTION public.emit_events_of_tenants(p_tenants jsonb)
 RETURNS TABLE(id text, created_at timestamp with time zone)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET jit TO 'off'
AS $function$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    WITH ev AS (
      INSERT INTO events (id, organization_id, environment, type, data, traceparent)
      SELECT e.id, t.organization_id, t.environment, e.type, e.data, e.traceparent
        FROM jsonb_to_recordset(p_tenants) AS t(organization_id text, environment text, events jsonb)
       CROSS JOIN LATERAL jsonb_to_recordset(t.events) AS e(id text, type text, data jsonb, traceparent text)
      RETURNING events.id, events.organization_id, events.environment, events.type, events.created_at
    ), deliveries AS (
      INSERT INTO webhook_deliveries (id, organization_id, environment, endpoint_id, event_id, next_attempt_at)
      SELECT new_id('wd'), ev.organization_id, ev.environment, w.id, ev.id, now()
        FROM ev JOIN webhook_endpoints w
          ON w.organization_id = ev.organization_id AND w.environment = ev.environment AND w.deleted_at IS NULL
             AND NOT w.disabled AND ev.type = ANY(w.event_types)
    )
    SELECT ev.id, ev.created_at FROM ev;
END
$function$;
GRANT EXECUTE ON FUNCTION public.emit_events_of_tenants(p_tenants jsonb) TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.emit_events_of_tenants(p_tenants jsonb) TO fcs_service;

CREATE OR REPLACE FUNCTION public.ids_after(prefix text, after text, n integer)
 RETURNS text[]
 LANGUAGE plpgsql
AS $function$
DECLARE
  alphabet constant text := '0123456789abcdefghjkmnpqrstvwxyz';
  cur text := new_id(prefix);
  out text[] := '{}';
  i int;
  pos int;
  digit int;
BEGIN
  IF after IS NOT NULL AND cur COLLATE "C" <= after COLLATE "C" THEN
    cur := after;
    i := 0;
  ELSE
    out := array_append(out, cur);
    i := 1;
  END IF;
  WHILE i < n LOOP
    pos := length(cur);
    LOOP
      digit := strpos(alphabet, substr(cur, pos, 1)) - 1;
      IF digit < 31 THEN
        cur := overlay(cur PLACING substr(alphabet, digit + 2, 1) FROM pos FOR 1);
        EXIT;
      END IF;
      cur := overlay(cur PLACING '0' FROM pos FOR 1);
      pos := pos - 1;
      IF pos <= length(prefix) + 1 THEN
        RAISE EXCEPTION 'ids_after: no id of % sorts after %', prefix, after;
      END IF;
    END LOOP;
    out := array_append(out, cur);
    i := i + 1;
  END LOOP;
  RETURN out;
END
$function$;
GRANT EXECUTE ON FUNCTION public.ids_after(prefix text, after text, n integer) TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.ids_after(prefix text, after text, n integer) TO fcs_service;

CREATE OR REPLACE FUNCTION public.lock_balance(p_org text, p_env text)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
  v_balance bigint;
BEGIN
  SELECT b.balance_cents INTO v_balance
    FROM balances b WHERE b.organization_id = p_org AND b.environment = p_env FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO balances (organization_id, environment) VALUES (p_org, p_env) ON CONFLICT DO NOTHING;
    SELECT b.balance_cents INTO v_balance
      FROM balances b WHERE b.organization_id = p_org AND b.environment = p_env FOR UPDATE;
  END IF;
  RETURN v_balance;
END
$function$;
GRANT EXECUTE ON FUNCTION public.lock_balance(p_org text, p_env text) TO fcs_service;

CREATE OR REPLACE FUNCTION public.new_id(prefix text)
 RETURNS text
 LANGUAGE plpgsql
 PARALLEL SAFE
AS $function$
DECLARE
  alphabet constant text := '0123456789abcdefghjkmnpqrstvwxyz';
  ms bigint := floor(extract(epoch FROM clock_timestamp()) * 1000);
  -- Bytes 0-5 and 12-15 of a version-4 UUID carry no fixed version or variant bits: 80 random bits.
  u bytea := uuid_send(gen_random_uuid());
  bits bit(80) := ('x' || encode(substring(u FROM 1 FOR 6) || substring(u FROM 13 FOR 4), 'hex'))::bit(80);
  out text := prefix || '_';
  i int;
BEGIN
  FOR i IN REVERSE 9..0 LOOP
    out := out || substr(alphabet, ((ms >> (5 * i)) & 31)::int + 1, 1);
  END LOOP;
  FOR i IN 0..15 LOOP
    out := out || substr(alphabet, substring(bits FROM 5 * i + 1 FOR 5)::int + 1, 1);
  END LOOP;
  RETURN out;
END
$function$;
GRANT EXECUTE ON FUNCTION public.new_id(prefix text) TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.new_id(prefix text) TO fcs_service;

CREATE OR REPLACE FUNCTION public.notify_api_key_change()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF TG_LEVEL = 'STATEMENT' THEN
    PERFORM pg_notify('api_key_changed', '*');
  ELSE
    PERFORM pg_notify('api_key_changed', OLD.key_hash);
  END IF;
  RETURN NULL;
END
$function$;
GRANT EXECUTE ON FUNCTION public.notify_api_key_change() TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.notify_api_key_change() TO fcs_service;

CREATE OR REPLACE FUNCTION public.notify_pricing_changed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM pg_notify('pricing_changed', '*');
  RETURN NULL;
END
$function$;
GRANT EXECUTE ON FUNCTION public.notify_pricing_changed() TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.notify_pricing_changed() TO fcs_service;

CREATE OR REPLACE FUNCTION public.notify_unchecked_api_key()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM pg_notify('api_key_changed', '*');
  RETURN NULL;
END
$function$;
GRANT EXECUTE ON FUNCTION public.notify_unchecked_api_key() TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.notify_unchecked_api_key() TO fcs_service;

CREATE OR REPLACE FUNCTION public.notify_white_label_domains_changed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM pg_notify('white_label_domains_changed', '*');
  RETURN NULL;
END
$function$;
GRANT EXECUTE ON FUNCTION public.notify_white_label_domains_changed() TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.notify_white_label_domains_changed() TO fcs_service;

CREATE OR REPLACE FUNCTION public.payment_status(p_payment text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
  SELECT s.status FROM payment_statuses s WHERE s.payment_id = p_payment ORDER BY s.id DESC LIMIT 1
$function$;
GRANT EXECUTE ON FUNCTION public.payment_status(p_payment text) TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.payment_status(p_payment text) TO fcs_service;

CREATE OR REPLACE FUNCTION public.payments_first_status()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO payment_statuses (payment_id, status, message, created_at)
  VALUES (NEW.id, NEW.status, NEW.failure_message, coalesce(NEW.refunded_at, NEW.created_at));
  RETURN NULL;
END
$function$;
GRANT EXECUTE ON FUNCTION public.payments_first_status() TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.payments_first_status() TO fcs_service;

CREATE OR REPLACE FUNCTION public.place_order_groups_of_tenants(p jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
 SET jit TO 'off'
AS $function$
DECLARE
  v_answers jsonb;
  v_events jsonb;
  v_postings jsonb;
  v_before bigint;
BEGIN
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(p) AS t(payload)
                     CROSS JOIN LATERAL jsonb_to_recordset(t.payload -> 'groups') AS g(idempotency_key text)
              WHERE g.idempotency_key IS NOT NULL) THEN
    UPDATE order_groups g SET idempotency_key = NULL
      FROM (SELECT t.payload ->> 'organization_id' AS organization_id, t.payload ->> 'environment' AS environment,
                   (t.payload ->> 'idempotency_key_ttl_hours')::int AS ttl_hours, x.idempotency_key
              FROM jsonb_array_elements(p) AS t(payload)
             CROSS JOIN LATERAL jsonb_to_recordset(t.payload -> 'groups') AS x(idempotency_key text)
             WHERE x.idempotency_key IS NOT NULL) k
     WHERE g.organization_id = k.organization_id AND g.environment = k.environment
       AND g.idempotency_key = k.idempotency_key
       AND g.created_at < now() - make_interval(hours => k.ttl_hours);
  END IF;
  WITH tenant AS MATERIALIZED (
    SELECT t.i, t.payload, t.payload ->> 'organization_id' AS organization_id, t.payload ->> 'environment' AS environment
      FROM jsonb_array_elements(p) WITH ORDINALITY AS t(payload, i)
  ), grp AS MATERIALIZED (
    SELECT t.i, t.organization_id, t.environment, g.*
      FROM tenant t
     CROSS JOIN LATERAL jsonb_to_recordset(t.payload -> 'groups')
                          AS g(n int, id text, user_id text, company_id text, forms boolean, filing_state text,
                               source text, billing text, request jsonb, total_cents bigint, idempotency_key text,
                               min_balance_cents bigint, actor text)
  ), company AS MATERIALIZED (
    -- Each list is read once, into rows of its own: joined to the checked groups as the inner side of a nested loop, a
    -- function of the tenant's parameter would be read again for every group.
    SELECT t.i, c.*
      FROM tenant t
     CROSS JOIN LATERAL jsonb_to_recordset(t.payload -> 'companies')
             AS c(n int, id text, slug text, legal_name text, trade_name text, ein text, entity_type text,
                  structure_type text, tax_election text, fiscal_end_month text, formation_date date,
                  formation_state text, principal_address jsonb, mailing_address jsonb, officers jsonb)
  ), ord_row AS MATERIALIZED (
    SELECT t.i, o.*
      FROM tenant t
     CROSS JOIN LATERAL jsonb_to_recordset(t.payload -> 'orders')
             AS o(n int, id text, history_id text, order_type text, filing_type text, subscription_status text,
                  details jsonb, amount_cents bigint, retail_cents bigint, margin_cents bigint, tax_id_sealed text)
  ), checked AS (
    SELECT g.*,
           CASE
             WHEN NOT EXISTS (SELECT 1 FROM users u
                               WHERE u.id = g.user_id AND u.organization_id = g.organization_id
                                 AND u.environment = g.environment)
               THEN 'unknown_user'
             WHEN g.idempotency_key IS NOT NULL
                  AND EXISTS (SELECT 1 FROM order_groups o
                               WHERE o.organization_id = g.organization_id AND o.environment = g.environment
                                 AND o.idempotency_key = g.idempotency_key)
               THEN 'earlier'
           END AS refused
      FROM grp g
  ), formed AS (
    INSERT INTO companies (id, organization_id, environment, slug, legal_name, trade_name, ein, entity_type,
                           structure_type, tax_election, fiscal_end_month, formation_date, formation_state,
                           principal_address, mailing_address, officers)
    SELECT c.id, k.organization_id, k.environment, c.slug, c.legal_name, c.trade_name, c.ein, c.entity_type,
           c.structure_type, c.tax_election, c.fiscal_end_month, c.formation_date, c.formation_state,
           c.principal_address, c.mailing_address, c.officers
      FROM company c
      JOIN checked k ON k.i = c.i AND k.n = c.n AND k.refused IS NULL
     ORDER BY k.organization_id, k.environment, k.n
    ON CONFLICT ON CONSTRAINT companies_slug_unique DO NOTHING
    RETURNING companies.id
  ), outcome AS MATERIALIZED (
    SELECT k.*,
           coalesce(k.refused,
                    CASE WHEN k.forms AND NOT EXISTS (SELECT 1 FROM formed f WHERE f.id = k.company_id)
                         THEN 'slug_taken' ELSE 'placed' END) AS outcome
      FROM checked k
  ), placed AS MATERIALIZED (
    SELECT o.* FROM outcome o WHERE o.outcome = 'placed'
  ), ord AS MATERIALIZED (
    SELECT o.*, g.organization_id, g.environment, g.id AS group_id, g.company_id, g.user_id, g.filing_state, g.billing,
           g.actor
      FROM ord_row o
      JOIN placed g ON g.i = o.i AND g.n = o.n
  ), admins_written AS (
    INSERT INTO company_admins (company_id, user_id, organization_id, environment)
    SELECT g.company_id, g.user_id, g.organization_id, g.environment FROM placed g WHERE g.forms
    ON CONFLICT (company_id, user_id) DO NOTHING
  ), groups_written AS (
    INSERT INTO order_groups (id, organization_id, environment, user_id, company_id, filing_state, source, billing,
                              request, total_cents, idempotency_key)
    SELECT g.id, g.organization_id, g.environment, g.user_id, g.company_id, g.filing_state, g.source, g.billing,
           g.request, g.total_cents, g.idempotency_key
      FROM placed g
  ), orders_written AS (
    INSERT INTO orders (id, organization_id, environment, group_id, company_id, user_id, order_type, filing_state,
                        filing_status, filing_type, subscription_status, details, billing, amount_cents, retail_cents,
                        margin_cents, current_period_end)
    SELECT o.id, o.organization_id, o.environment, o.group_id, o.company_id, o.user_id, o.order_type, o.filing_state,
           'submitted', o.filing_type, o.subscription_status, o.details, o.billing, o.amount_cents, o.retail_cents,
           o.margin_cents,
           -- CAL-35: an annual report paid for several years renews after the last of them.
           CASE WHEN o.subscription_status IS NOT NULL
                THEN ((now() AT TIME ZONE 'UTC')::date
                      + make_interval(years => COALESCE((o.details ->> 'years')::int, 1)))::date END
      FROM ord o
  ), history_written AS (
    INSERT INTO order_status_history (id, order_id, organization_id, environment, from_status, to_status, actor)
    SELECT o.history_id, o.id, o.organization_id, o.environment, NULL, 'submitted', o.actor
      FROM ord o
  ), tax_ids_written AS (
    INSERT INTO ein_tax_ids (order_id, organization_id, environment, sealed)
    SELECT o.id, o.organization_id, o.environment, o.tax_id_sealed
      FROM ord o WHERE o.tax_id_sealed IS NOT NULL
  ), answer AS MATERIALIZED (
    SELECT o.i, o.organization_id, o.environment,
           jsonb_agg(o.outcome ORDER BY o.n) AS outcomes,
           count(*) FILTER (WHERE o.outcome = 'placed') AS placed,
           count(*) AS placements,
           sum(o.min_balance_cents) FILTER (WHERE o.outcome = 'placed') AS min_balance_cents
      FROM outcome o
     GROUP BY o.i, o.organization_id, o.environment
  ), debits AS (
    -- A tenant's debits: as given when all of its placements are placed, else those of its placed ones.
    SELECT a.organization_id, a.environment, a.min_balance_cents,
           CASE WHEN a.placed = a.placements THEN t.payload -> 'debits'
                ELSE (SELECT coalesce(jsonb_agg(d.r ORDER BY d.k), '[]'::jsonb)
                        FROM jsonb_array_elements(t.payload -> 'debits') WITH ORDINALITY AS d(r, k)
                        JOIN placed g ON g.i = a.i AND g.n = (d.r ->> 'n')::int) END AS entries
      FROM answer a JOIN tenant t ON t.i = a.i
     WHERE a.placed > 0
  )
  SELECT (SELECT jsonb_agg(jsonb_build_object(
                   'outcomes', a.outcomes, 'created_at', now(),
                   -- emit_events_of_tenants' test for a delivery, asked once per tenant for the event types of its
                   -- placements (one not placed writes none, and its events are of the types of the others'): at
                   -- worst a wake-up nobody needed.
                   'deliveries', a.placed > 0
                                 AND EXISTS (SELECT 1 FROM webhook_endpoints w
                                              WHERE w.organization_id = a.organization_id
                                                AND w.environment = a.environment
                                                AND w.deleted_at IS NULL AND NOT w.disabled
                                                AND w.event_types && ARRAY(SELECT e.type
                                                                             FROM jsonb_to_recordset(t.payload -> 'events')
                                                                                    AS e(type text))),
                   'streams', a.placed > 0
                              AND EXISTS (SELECT 1 FROM event_stream_tenants s
                                           WHERE s.organization_id = a.organization_id
                                             AND s.environment = a.environment AND s.expires_at > now()))
                 ORDER BY a.i)
            FROM answer a JOIN tenant t ON t.i = a.i),
         -- p itself is emit_events_of_tenants' parameter ({organization_id, environment, events} per tenant, other
         -- keys ignored) when every placement is placed: the events' JSON is not built again. Else the placed ones'
         -- events, in order.
         CASE WHEN (SELECT bool_and(a.placed = a.placements) FROM answer a) THEN p
              ELSE (SELECT jsonb_agg(jsonb_build_object(
                                       'organization_id', a.organization_id, 'environment', a.environment,
                                       'events', (SELECT coalesce(jsonb_agg(e.r ORDER BY e.k), '[]'::jsonb)
                                                    FROM jsonb_array_elements(t.payload -> 'events')
                                                           WITH ORDINALITY AS e(r, k)
                                                    JOIN placed g ON g.i = a.i AND g.n = (e.r ->> 'n')::int)))
                      FROM answer a JOIN tenant t ON t.i = a.i
                     WHERE a.placed > 0) END,
         (SELECT jsonb_agg(to_jsonb(d) ORDER BY d.organization_id, d.environment)
            FROM debits d WHERE jsonb_array_length(d.entries) > 0)
    INTO v_answers, v_events, v_postings;

  IF v_events IS NOT NULL THEN
    PERFORM emit_events_of_tenants(v_events);
  END IF;
  IF v_postings IS NOT NULL THEN
    SELECT e.balance_before INTO v_before
      FROM post_ledger_entries_of_tenants(v_postings) e
     WHERE e.id IS NULL
     LIMIT 1;
    IF FOUND THEN
      RAISE EXCEPTION 'insufficient balance' USING ERRCODE = 'FC402', DETAIL = v_before::text;
    END IF;
  END IF;
  RETURN v_answers;
END
$function$;
GRANT EXECUTE ON FUNCTION public.place_order_groups_of_tenants(p jsonb) TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.place_order_groups_of_tenants(p jsonb) TO fcs_service;

CREATE OR REPLACE FUNCTION public.post_ledger_entries(p_org text, p_env text, p_entries jsonb, p_min_balance bigint)
 RETURNS TABLE(id text, organization_id text, environment text, type text, amount_cents bigint, balance_after_cents bigint, line_type text, description text, order_id text, reverses_entry_id text, created_by text, created_at timestamp with time zone, balance_before bigint)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET plan_cache_mode TO 'force_generic_plan'
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
  RETURN QUERY SELECT *
    FROM post_ledger_entries_of_tenants(jsonb_build_array(
           jsonb_build_object('organization_id', p_org, 'environment', p_env, 'min_balance_cents', p_min_balance,
                              'entries', p_entries)));
END
$function$;
GRANT EXECUTE ON FUNCTION public.post_ledger_entries(p_org text, p_env text, p_entries jsonb, p_min_balance bigint) TO fcs_service;

CREATE OR REPLACE FUNCTION public.post_ledger_entries_of_tenants(p_postings jsonb)
 RETURNS TABLE(id text, organization_id text, environment text, type text, amount_cents bigint, balance_after_cents bigint, line_type text, description text, order_id text, reverses_entry_id text, created_by text, created_at timestamp with time zone, balance_before bigint)
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET plan_cache_mode TO 'force_generic_plan'
 SET jit TO 'off'
 SET search_path TO 'public', 'pg_temp'
AS $function$
#variable_conflict use_column
DECLARE
  v_locked bigint;
  v_short bigint;
BEGIN
  SELECT count(*), count(*) FILTER (WHERE l.balance_cents < l.min_balance_cents) INTO v_locked, v_short FROM (
    SELECT b.balance_cents, t.min_balance_cents FROM balances b
      JOIN jsonb_to_recordset(p_postings) AS t(organization_id text, environment text, min_balance_cents bigint)
        ON b.organization_id = t.organization_id AND b.environment = t.environment
     ORDER BY b.organization_id, b.environment
       FOR UPDATE OF b) l;
  IF v_locked < jsonb_array_length(p_postings) THEN
    INSERT INTO balances (organization_id, environment)
    SELECT t.organization_id, t.environment FROM jsonb_to_recordset(p_postings) AS t(organization_id text, environment text)
     ORDER BY t.organization_id, t.environment
    ON CONFLICT DO NOTHING;
    SELECT count(*) FILTER (WHERE l.balance_cents < l.min_balance_cents) INTO v_short FROM (
      SELECT b.balance_cents, t.min_balance_cents FROM balances b
        JOIN jsonb_to_recordset(p_postings) AS t(organization_id text, environment text, min_balance_cents bigint)
          ON b.organization_id = t.organization_id AND b.environment = t.environment
       ORDER BY b.organization_id, b.environment
         FOR UPDATE OF b) l;
  END IF;
  IF v_short > 0 THEN
    RETURN QUERY
      SELECT NULL::text, t.organization_id, t.environment, NULL::text, NULL::bigint, NULL::bigint, NULL::text,
             NULL::text, NULL::text, NULL::text, NULL::text, NULL::timestamptz, b.balance_cents
        FROM jsonb_to_recordset(p_postings) AS t(organization_id text, environment text, min_balance_cents bigint)
        JOIN balances b ON b.organization_id = t.organization_id AND b.environment = t.environment
       WHERE b.balance_cents < t.min_balance_cents
       ORDER BY t.organization_id, t.environment;
    RETURN;
  END IF;
  RETURN QUERY
    WITH posting AS MATERIALIZED (
      SELECT t.organization_id, t.environment, t.entries, b.balance_cents AS balance_before,
             ids_after('txn', b.last_entry_id, jsonb_array_length(t.entries)) AS ids
        FROM jsonb_to_recordset(p_postings) AS t(organization_id text, environment text, entries jsonb)
        JOIN balances b ON b.organization_id = t.organization_id AND b.environment = t.environment
       WHERE jsonb_array_length(t.entries) > 0
    ), l AS MATERIALIZED (
      SELECT p.organization_id, p.environment, p.balance_before, p.ids[l.i] AS id, l.*,
             p.balance_before + sum(l.amount_cents) OVER (PARTITION BY p.organization_id, p.environment ORDER BY l.i)
               AS balance_after_cents
        FROM posting p
       CROSS JOIN LATERAL ROWS FROM (jsonb_to_recordset(p.entries)
                            AS (type text, amount_cents bigint, line_type text, description text, order_id text,
                                reverses_entry_id text, created_by text, reference text))
             WITH ORDINALITY
               AS l(type, amount_cents, line_type, description, order_id, reverses_entry_id, created_by, reference, i)
    ), moved AS (
      UPDATE balances b
         SET balance_cents = b.balance_cents + m.total, last_entry_id = m.last_entry_id, updated_at = now()
        FROM (SELECT p.organization_id, p.environment, p.ids[cardinality(p.ids)] AS last_entry_id,
                     (SELECT sum(l.amount_cents) FROM l
                       WHERE l.organization_id = p.organization_id AND l.environment = p.environment) AS total
                FROM posting p) m
       WHERE b.organization_id = m.organization_id AND b.environment = m.environment
    ), written AS (
      INSERT INTO ledger_entries AS le (id, organization_id, environment, type, amount_cents, balance_after_cents,
                                        line_type, description, order_id, reverses_entry_id, created_by, reference)
      SELECT l.id, l.organization_id, l.environment, l.type, l.amount_cents, l.balance_after_cents, l.line_type,
             l.description, l.order_id, l.reverses_entry_id, l.created_by, l.reference
        FROM l
       ORDER BY l.organization_id, l.environment, l.i
      RETURNING le.id, le.organization_id, le.environment, le.type, le.amount_cents, le.balance_after_cents,
                le.line_type, le.description, le.order_id, le.reverses_entry_id, le.created_by, le.created_at
    )
    SELECT w.*, l.balance_before FROM written w JOIN l ON l.id = w.id ORDER BY l.organization_id, l.environment, l.i;
END
$function$;
GRANT EXECUTE ON FUNCTION public.post_ledger_entries_of_tenants(p_postings jsonb) TO fcs_service;

CREATE OR REPLACE FUNCTION public.queue_auto_recharge()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
  s auto_recharge_settings%ROWTYPE;
  v_id text;
BEGIN
  SELECT * INTO s FROM auto_recharge_settings WHERE organization_id = NEW.organization_id;
  IF NOT FOUND OR NOT s.enabled OR NEW.balance_cents >= s.threshold_cents THEN
    RETURN NULL;
  END IF;
  -- A clawback (a disputed or refunded payment taken back) never charges the saved method again: the next debit does.
  -- The posting's entries are written by the statement that moved the balance, so they are visible here.
  IF EXISTS (SELECT 1 FROM ledger_entries e WHERE e.id = NEW.last_entry_id AND e.type = 'clawback') THEN
    RETURN NULL;
  END IF;
  INSERT INTO auto_recharges (id, organization_id, amount_cents, threshold_cents, stripe_customer, payment_method,
                              triggered_by, balance_cents)
  VALUES (new_id('arc'), NEW.organization_id, s.amount_cents, s.threshold_cents, s.stripe_customer, s.payment_method,
          NEW.last_entry_id, NEW.balance_cents)
  ON CONFLICT (organization_id) WHERE status IN ('queued', 'processing') DO NOTHING
  RETURNING id INTO v_id;
  IF v_id IS NOT NULL THEN
    PERFORM graphile_worker.add_job('run_auto_recharge', json_build_object('autoRechargeId', v_id),
                                    max_attempts => 10);
  END IF;
  RETURN NULL;
END
$function$;
GRANT EXECUTE ON FUNCTION public.queue_auto_recharge() TO fcs_service;

CREATE OR REPLACE FUNCTION public.refuse_append_only_change()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  RAISE EXCEPTION '% is append-only: % is not allowed (add a correcting row instead)', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'restrict_violation';
END
$function$;
GRANT EXECUTE ON FUNCTION public.refuse_append_only_change() TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.refuse_append_only_change() TO fcs_service;

CREATE OR REPLACE FUNCTION public.refuse_missing_reference(p_table text, p_constraint text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  RAISE EXCEPTION 'insert on table "%" violates foreign key constraint "%"', p_table, p_constraint
    USING ERRCODE = 'foreign_key_violation', TABLE = p_table, CONSTRAINT = p_constraint;
END
$function$;
GRANT EXECUTE ON FUNCTION public.refuse_missing_reference(p_table text, p_constraint text) TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.refuse_missing_reference(p_table text, p_constraint text) TO fcs_service;

CREATE OR REPLACE FUNCTION public.refuse_reference_change()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  RAISE EXCEPTION 'the key and reference columns of % never change', TG_TABLE_NAME
    USING ERRCODE = 'restrict_violation';
END
$function$;
GRANT EXECUTE ON FUNCTION public.refuse_reference_change() TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.refuse_reference_change() TO fcs_service;

CREATE OR REPLACE FUNCTION public.refuse_reference_delete()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  RAISE EXCEPTION 'rows of % are never removed: other records refer to them (% is not allowed)', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'restrict_violation';
END
$function$;
GRANT EXECUTE ON FUNCTION public.refuse_reference_delete() TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.refuse_reference_delete() TO fcs_service;

CREATE OR REPLACE FUNCTION public.revoke_sessions_of_retired_domain()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  UPDATE dashboard_sessions s SET revoked_at = now()
    FROM magic_links l
   WHERE s.organization_id = OLD.id AND s.revoked_at IS NULL AND l.id = s.magic_link_id
     AND l.host = OLD.white_label_domain;
  RETURN NULL;
END
$function$;
GRANT EXECUTE ON FUNCTION public.revoke_sessions_of_retired_domain() TO PUBLIC;
GRANT EXECUTE ON FUNCTION public.revoke_sessions_of_retired_domain() TO fcs_service;
