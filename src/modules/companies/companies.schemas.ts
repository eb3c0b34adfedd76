import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { DateTime, Nullable, PageQuery } from '../../lib/schemas.js';
import { AddressSchema, CompanyFieldsSchema, stringEnum } from './company-rules.js';

const F = CompanyFieldsSchema.properties;

/**
 * A string field that also accepts null (PATCH clears a field with null). One `type: ['string','null']`
 * schema instead of a union, so a bad value gets one clear error rather than one per union branch.
 */
function nullableString<T extends TSchema>(schema: T) {
  const values: unknown[] | undefined = schema.enum;
  return Type.Unsafe<Static<T> | null>({
    ...schema,
    type: ['string', 'null'],
    ...(values ? { enum: [...values, null] } : {}),
  });
}

/** POST /companies: the company request fields plus the owning user (CO-1, CO-9). */
export const CreateCompanyBody = Type.Object(
  {
    ...F,
    userId: Type.String({
      minLength: 1,
      description: 'Id (user_…) of a user of this environment; that user becomes an admin of the company.',
    }),
  },
  { additionalProperties: false, title: 'CreateCompanyRequest' },
);

/** The POST /companies body as validated by CreateCompanyBody. */
export type CreateCompanyInput = Static<typeof CreateCompanyBody>;

/**
 * PATCH /companies/{companyIdOrSlug}: every request field except userId is optional; entityType is accepted
 * only when unchanged; null clears tradeName, ein, formationDate and formationState.
 */
export const UpdateCompanyBody = Type.Object(
  {
    legalName: Type.Optional(F.legalName),
    tradeName: Type.Optional(nullableString(F.tradeName)),
    ein: Type.Optional(nullableString(F.ein)),
    entityType: Type.Optional(
      stringEnum(['LLC', 'CORP'] as const, 'Immutable: accepted only when equal to the current value.'),
    ),
    structureType: Type.Optional(F.structureType),
    taxElection: Type.Optional(F.taxElection),
    fiscalEndMonth: Type.Optional(F.fiscalEndMonth),
    formationDate: Type.Optional(nullableString(F.formationDate)),
    formationState: Type.Optional(nullableString(F.formationState)),
    principalAddress: Type.Optional(F.principalAddress),
    mailingAddress: Type.Optional(F.mailingAddress),
    officers: Type.Optional(F.officers),
  },
  { additionalProperties: false, title: 'UpdateCompanyRequest' },
);

/** The PATCH /companies/{companyIdOrSlug} body as validated by UpdateCompanyBody. */
export type UpdateCompanyInput = Static<typeof UpdateCompanyBody>;

/** The Company response (CO-7): its response fields plus slug; officers are request-only and never returned. */
export const CompanySchema = Type.Object(
  {
    id: Type.String({ description: 'prefix comp_' }),
    slug: Type.String({
      description: 'Readable id unique in this environment, derived from the legal name at creation; never changes.',
    }),
    legalName: Type.String(),
    tradeName: Nullable(Type.String()),
    ein: Nullable(Type.String({ description: 'XX-XXXXXXX' })),
    entityType: Type.String({ description: 'LLC or CORP' }),
    structureType: Nullable(Type.String({ description: 'MEMBER or MANAGER (LLC only)' })),
    taxElection: Nullable(Type.String({ description: 'C Corporation or S Corporation (CORP only)' })),
    fiscalEndMonth: Type.String(),
    formationDate: Nullable(Type.String({ format: 'date' })),
    formationState: Nullable(Type.String()),
    principalAddress: AddressSchema,
    mailingAddress: AddressSchema,
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'Company' },
);

/** A Company as the API returns it (timestamps ISO 8601, formationDate YYYY-MM-DD). */
export type Company = Static<typeof CompanySchema>;

/** Path `{companyIdOrSlug}`: a company id (comp_…) or its slug (CO-8). */
export const CompanyParams = Type.Object({
  companyIdOrSlug: Type.String({ minLength: 1, description: 'Company id (comp_…) or slug.' }),
});

/** Query of GET /companies: cursor pagination (limit, startingAfter) and an optional `userId` filter. */
export const ListCompaniesQuery = Type.Object(
  {
    ...PageQuery.properties,
    userId: Type.Optional(Type.String({ minLength: 1, description: 'Only companies this user is an admin of.' })),
  },
  { additionalProperties: false },
);

/** The GET /companies query as validated by the schema of the same name. */
export type ListCompaniesQuery = Static<typeof ListCompaniesQuery>;
