import { Type } from '@sinclair/typebox';
import { DateTime } from '../../lib/schemas.js';

/** Body of POST /auth/magic-link (ML-1). */
export const CreateMagicLinkBody = Type.Object(
  {
    userId: Type.String({ minLength: 1, description: 'One of your users (prefix user_).' }),
    companyId: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          "The link lands on this company's page; the user must be an admin of the company (Authentication rule 4).",
      }),
    ),
  },
  { additionalProperties: false, title: 'CreateMagicLinkRequest' },
);

/** POST /auth/magic-link answer: `{magicLink, expiresAt}` (ML-1 to ML-5). */
export const MagicLinkSchema = Type.Object(
  {
    magicLink: Type.String({
      format: 'uri',
      description:
        'Single-use sign-in URL carrying the token. Deliver it only to that user; it is never shown again and never logged.',
    }),
    expiresAt: Type.String({
      ...DateTime,
      description:
        'The link stops working at this time (7 days after minting) or when first opened, whichever comes first.',
    }),
  },
  { title: 'MagicLink' },
);
