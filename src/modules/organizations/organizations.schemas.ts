import { Type } from '@sinclair/typebox';
import { DateTime, Nullable } from '../../lib/schemas.js';
import { MAX_OPERATOR_CREDIT_DOLLARS } from '../../lib/amounts.js';

/** The environment of a key or balance: `live` or `test` (TEN-1). */
const EnvironmentSchema = Type.Union([Type.Literal('live'), Type.Literal('test')], {
  description: 'live or test',
});

/** An API key as created (POST /admin/v1/organizations/{id}/api-keys): the only answer that carries the secret `key`. */
export const NewApiKeySchema = Type.Object({
  id: Type.String({ description: 'Key id, prefix key_ (used to revoke it).' }),
  environment: EnvironmentSchema,
  key: Type.String({ description: 'The secret key, sk_live_… or sk_test_…; shown only once.' }),
  createdAt: DateTime,
});

/** An API key as listed: `redactedKey`, never the secret; createdAt and revokedAt are ISO 8601 (revokedAt null while active). */
export const ApiKeySchema = Type.Object({
  id: Type.String(),
  environment: EnvironmentSchema,
  redactedKey: Type.String(),
  createdAt: DateTime,
  revokedAt: Nullable(DateTime),
});

/** An email address as validator's isEmail accepts it (`format: 'email'`, src/lib/validation.ts), at most 254 characters. */
export const ContactEmail = Type.String({ format: 'email', minLength: 3, maxLength: 254 });

const CONTACT_EMAIL_DESCRIPTION =
  'Technical contact: emailed when a webhook endpoint of the organization is disabled after failing ' +
  '(HTTP 410, or every delivery failing for WEBHOOK_DISABLE_AFTER_HOURS). null: nobody is emailed.';

/** Body of POST /admin/v1/organizations: `{name, contactEmail?}`. */
export const CreateOrganizationBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    contactEmail: Type.Optional(Type.Union([ContactEmail, Type.Null()], { description: CONTACT_EMAIL_DESCRIPTION })),
  },
  { additionalProperties: false },
);

/**
 * POST /admin/v1/organizations answer (ORG-1: `{id, name, apiKeys: {live, test}}`): `apiKeys.live` and
 * `apiKeys.test` are the secret keys themselves, usable as `x-api-key` as they are; `apiKeyIds` gives their ids
 * (for DELETE …/api-keys/{keyId}).
 */
export const CreatedOrganizationSchema = Type.Object({
  id: Type.String({ description: 'prefix org_' }),
  name: Type.String(),
  contactEmail: Nullable(Type.String({ description: CONTACT_EMAIL_DESCRIPTION })),
  apiKeys: Type.Object({
    live: Type.String({ description: 'The live secret key sk_live_…; shown only once.' }),
    test: Type.String({ description: 'The test secret key sk_test_…; shown only once.' }),
  }),
  apiKeyIds: Type.Object({
    live: Type.String({ description: 'prefix key_' }),
    test: Type.String({ description: 'prefix key_' }),
  }),
});

/** GET /admin/v1/organizations/{id} answer: settings, `balances` per environment in dollars, every API key redacted. */
export const AdminOrganizationSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  whiteLabelDomain: Nullable(
    Type.String({
      description: 'Requested white-label domain; in effect only when whiteLabelDomainVerification.status is verified.',
    }),
  ),
  whiteLabelDomainVerification: Nullable(
    Type.Object({
      status: Type.Union([Type.Literal('pending'), Type.Literal('verified')]),
      recordType: Type.Literal('TXT'),
      recordName: Type.String(),
      recordValue: Type.String(),
      verifiedAt: Nullable(DateTime),
    }),
  ),
  dashboardBilling: Type.String(),
  emailNotifications: Type.Boolean(),
  contactEmail: Nullable(Type.String({ description: CONTACT_EMAIL_DESCRIPTION })),
  balances: Type.Object({
    live: Type.Number({ description: 'dollars' }),
    test: Type.Number({ description: 'dollars' }),
  }),
  apiKeys: Type.Array(ApiKeySchema),
  createdAt: DateTime,
});

/** Path `{id}`: an organization id (prefix org_). */
export const OrgIdParams = Type.Object({ id: Type.String() });
/** Path `{id, keyId}`: an organization id and one of its key ids (prefix key_). */
export const KeyParams = Type.Object({ id: Type.String(), keyId: Type.String() });
/** Body of POST /admin/v1/organizations/{id}/api-keys: `{environment}`. */
export const CreateKeyBody = Type.Object({ environment: EnvironmentSchema }, { additionalProperties: false });

const HexColor = (what: string) =>
  Type.Union([Type.String({ pattern: '^#[0-9a-fA-F]{6}$', description: `${what} as #rrggbb.` }), Type.Null()], {
    description: `${what} as #rrggbb; null resets to the default.`,
  });

/**
 * Body of PATCH /organization. Every field optional; only the fields sent change (live key only).
 * `branding` fields merge into the stored branding (send null to clear one).
 */
export const UpdateOrganizationBody = Type.Object(
  {
    name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Shown to your customers in the dashboard and emails.',
      }),
    ),
    whiteLabelDomain: Type.Optional(
      Type.Union([Type.String({ minLength: 3, maxLength: 253 }), Type.Null()], {
        description:
          'Host name (e.g. portal.example.com: no scheme, port or path) on which the dashboard answers and to which magic links point, over https, ' +
          'once verified: a new domain is pending until its DNS TXT record (whiteLabelDomainVerification in the answer) is found by ' +
          'POST /organization/white-label-domain/verify. Point its DNS at the service. No two organizations hold one domain (409 when another holds it). ' +
          'Sending the current domain again keeps its state; null removes it.',
      }),
    ),
    branding: Type.Optional(
      Type.Object(
        {
          logoUrl: Type.Optional(
            Type.Union([Type.String({ maxLength: 2048 }), Type.Null()], {
              description: 'https URL of your logo (shown at most 36 px high); null removes it.',
            }),
          ),
          primaryColor: Type.Optional(HexColor('Brand colour of the dashboard header and buttons')),
          accentColor: Type.Optional(HexColor('Accent colour for highlights')),
        },
        {
          additionalProperties: false,
          description:
            'Dashboard branding; fields sent replace the stored ones, others are kept. Text colours are chosen automatically for contrast.',
        },
      ),
    ),
    emailNotifications: Type.Optional(
      Type.Boolean({ description: 'Email the admins of a company when a document arrives for it.' }),
    ),
    dashboardBilling: Type.Optional(
      Type.Union([Type.Literal('organization'), Type.Literal('customer')], {
        description:
          'Who pays for dashboard orders: organization (your prepaid balance at wholesale, like API orders) or customer (in-app card checkout at your retail prices plus state fees).',
      }),
    ),
    // Checked by the service after trimming (normalizeContactEmail), so " Ops@Example.com " is taken and "" removes it.
    contactEmail: Type.Optional(
      Type.Union([Type.String({ maxLength: 300 }), Type.Null()], {
        description: `${CONTACT_EMAIL_DESCRIPTION} Surrounding spaces are dropped; null or an empty string removes it.`,
      }),
    ),
    lowBalanceThreshold: Type.Optional(
      Type.Union(
        [
          Type.Number({
            minimum: 0,
            maximum: MAX_OPERATOR_CREDIT_DOLLARS,
            description: 'Dollars, at most two decimals.',
          }),
          Type.Null(),
        ],
        {
          description:
            "Dollars: when a debit takes an environment's balance from at or above this amount to below it, a balance.low event is sent (once per crossing: again only after the balance was back at or above it). Applies to the live and the test balance each on its own; null turns the alert off.",
        },
      ),
    ),
  },
  { additionalProperties: false, title: 'UpdateOrganizationRequest' },
);
