import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Nullable } from '../../lib/schemas.js';

/** Request body of POST /users (USR-1). Email syntax and phone validity are checked in the service. */
export const CreateUserBody = Type.Object(
  {
    fullName: Type.String({ minLength: 1 }),
    email: Type.String({
      minLength: 1,
      maxLength: 254,
      format: 'email',
      description: 'Unique per environment, compared case-insensitively.',
    }),
    phoneNumber: Type.Optional(
      Type.Unsafe<string | null>({
        type: ['string', 'null'],
        description: 'E.164 with the leading +, e.g. +14155550123; null or absent for none.',
      }),
    ),
  },
  { additionalProperties: false, title: 'CreateUserRequest' },
);

/** The POST /users body as validated by CreateUserBody. */
export type CreateUserInput = Static<typeof CreateUserBody>;

/** The User response: always all six fields (USR-1). */
export const UserSchema = Type.Object(
  {
    id: Type.String({ description: 'prefix user_' }),
    fullName: Type.String(),
    email: Type.String({ description: 'As given at creation (lookups ignore case).' }),
    phoneNumber: Nullable(Type.String({ description: 'E.164' })),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'User' },
);

/** A User as the API returns it (timestamps ISO 8601). */
export type User = Static<typeof UserSchema>;

/** Path `{userIdOrEmail}` of GET /users/{userIdOrEmail}. */
export const UserParams = Type.Object({
  userIdOrEmail: Type.String({
    minLength: 1,
    description: "A user id (user_…) or the user's email (case-insensitive).",
  }),
});
