import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiPluginOptions } from '../../context.js';
import { operation, operationErrors } from '../../lib/api-operations.js';
import { ListOf } from '../../lib/schemas.js';
import { attachedNonBodyErrors, validated } from '../../lib/validation.js';
import {
  CompanyParams,
  CompanySchema,
  CreateCompanyBody,
  ListCompaniesQuery,
  UpdateCompanyBody,
} from './companies.schemas.js';
import {
  companyPatchRules,
  createCompany,
  findCompanyOrThrow,
  getCompanyView,
  listCompanies,
  serializeCompany,
  updateCompany,
} from './companies.service.js';
import { companyRuleErrors } from './company-rules.js';

const RULES = `Rules (Company, Address and Officer): structureType is required for an LLC and refused for a CORP; \
taxElection is required for a CORP and refused for an LLC; fiscalEndMonth defaults to December. Addresses: country is an \
ISO 3166-1 alpha-2 code in upper case (XK included); state and postalCode are optional, and on a US address a state given is \
a two-letter code and a postalCode given has five digits (ZIP+4 is not accepted: the API takes five digits). Officers: at least one, exactly one isPrimary; PERSON needs \
firstName and lastName, COMPANY needs companyName; CORP titles: President, Vice President, Secretary, Treasurer, CEO, CFO, COO; \
LLC titles: Managing Member, Member, Manager, with at least one Member or Managing Member. Officers are stored but never \
returned. A 400 lists every bad field in \`errors\` as dotted paths (e.g. officers.1.title).`;

/** POST/GET/PATCH /companies (CO-1 to CO-11). */
export const companyRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (app, { ctx }) => {
  app.post(
    '/companies',
    {
      attachValidation: true,
      schema: {
        ...operation('createCompany'),
        summary: 'Create a company',
        description: `Creates a company owned by userId, who becomes an admin of it. The company gets a readable slug unique in \
this environment, derived from legalName (acme-holdings-llc, then acme-holdings-llc-2 …); it never changes. A userId that is \
not a user of this environment (another organization's or environment's included) is a 404 whose \`errors\` names \
the field userId, as for any id this tenant cannot see. ${RULES}`,
        body: CreateCompanyBody,
        response: { 201: CompanySchema, ...operationErrors('createCompany') },
      },
    },
    async (request, reply) => {
      const body = validated(CreateCompanyBody, request.body, [companyRuleErrors], {
        prior: attachedNonBodyErrors(request),
      });
      const row = await createCompany(ctx.pool, request.tenant, body);
      return reply.status(201).send(serializeCompany(row));
    },
  );

  app.get(
    '/companies',
    {
      schema: {
        ...operation('listCompanies'),
        summary: 'List companies',
        description:
          'Companies of this environment, newest first; with userId, only the companies that user is an admin of.',
        querystring: ListCompaniesQuery,
        response: { 200: ListOf(CompanySchema), ...operationErrors('listCompanies') },
      },
    },
    async (request) => listCompanies(ctx.pool, request.tenant, request.query),
  );

  app.get(
    '/companies/:companyIdOrSlug',
    {
      schema: {
        ...operation('getCompany'),
        summary: 'Retrieve a company by id or slug',
        description:
          'Pass the company id (comp_…) or its slug. Officers are never returned. A company of another organization or environment answers 404.',
        params: CompanyParams,
        response: { 200: CompanySchema, ...operationErrors('getCompany') },
      },
    },
    async (request) => getCompanyView(ctx.pool, request.tenant, request.params.companyIdOrSlug),
  );

  app.patch(
    '/companies/:companyIdOrSlug',
    {
      attachValidation: true,
      schema: {
        ...operation('updateCompany'),
        summary: 'Update a company',
        description: `Updatable: legalName, tradeName, ein, structureType, taxElection, fiscalEndMonth, formationDate, \
formationState, principalAddress, mailingAddress, officers. Send only the fields to change; an address or officers sent \
replaces the whole value (officers: the whole list). null clears tradeName, ein, formationDate or formationState. entityType \
cannot change (sending the current value is accepted); the slug never changes, even when legalName does. The company that \
results from the change is validated with the same rules as a new one, so e.g. a CORP cannot get a structureType. ${RULES}`,
        params: CompanyParams,
        body: UpdateCompanyBody,
        response: { 200: CompanySchema, ...operationErrors('updateCompany') },
      },
    },
    async (request) => {
      // The rules check the company the patch produces, so the company is read first (404 before any 400).
      const current = await findCompanyOrThrow(ctx.pool, request.tenant, request.params.companyIdOrSlug);
      const patch = validated(UpdateCompanyBody, request.body, companyPatchRules(current), {
        prior: attachedNonBodyErrors(request),
      });
      const row = await updateCompany(ctx.pool, request.tenant, current.id, patch);
      return serializeCompany(row);
    },
  );
};
