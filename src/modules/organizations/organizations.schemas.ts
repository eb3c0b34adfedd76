import { Type } from '@sinclair/typebox';
import { DateTime, Nullable } from '../../lib/schemas.js';

export const EnvironmentSchema = Type.Union([Type.Literal('live'), Type.Literal('test')], { description: 'live or test' });

export const NewApiKeySchema = Type.Object({
  id: Type.String({ description: 'Key id, prefix key_ (used to revoke it).' }),
  environment: EnvironmentSchema,
  key: Type.String({ description: 'The secret key, sk_live_… or sk_test_…; shown only once.' }),
  createdAt: DateTime,
});

export const ApiKeySchema = Type.Object({
  id: Type.String(),
  environment: EnvironmentSchema,
  redactedKey: Type.String(),
  createdAt: DateTime,
  revokedAt: Nullable(DateTime),
});

export const CreateOrganizationBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

export const CreatedOrganizationSchema = Type.Object({
  id: Type.String({ description: 'prefix org_' }),
  name: Type.String(),
  apiKeys: Type.Object({ live: NewApiKeySchema, test: NewApiKeySchema }),
});

export const AdminOrganizationSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  whiteLabelDomain: Nullable(Type.String()),
  dashboardBilling: Type.String(),
  emailNotifications: Type.Boolean(),
  balances: Type.Object({ live: Type.Number({ description: 'dollars' }), test: Type.Number({ description: 'dollars' }) }),
  apiKeys: Type.Array(ApiKeySchema),
  createdAt: DateTime,
});

export const OrgIdParams = Type.Object({ id: Type.String() });
export const KeyParams = Type.Object({ id: Type.String(), keyId: Type.String() });
export const CreateKeyBody = Type.Object({ environment: EnvironmentSchema }, { additionalProperties: false });
