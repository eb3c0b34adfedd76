import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiPluginOptions } from '../../context.js';
import { operation, operationErrors } from '../../lib/api-operations.js';
import * as schemas from './documents.schemas.js';
import * as service from './documents.service.js';

/** Integrator routes: GET /documents/{documentId} and GET /documents (DOC-1). */
export const documentRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (app, { ctx }) => {
  app.get(
    '/documents/:documentId',
    {
      schema: {
        ...operation('getDocument'),
        summary: 'Retrieve a document',
        description:
          'Returns the document with a fresh signed fileUrl (valid one hour). Documents of other organizations or environments answer 404.',
        params: schemas.DocumentParams,
        response: { 200: schemas.DocumentSchema, ...operationErrors('getDocument') },
      },
    },
    async (request) => service.getDocument(ctx, request.tenant, request.params.documentId),
  );

  app.get(
    '/documents',
    {
      schema: {
        ...operation('listDocuments'),
        summary: 'List documents',
        description:
          'Documents of this environment, newest first, optionally of one company, order or type. Each carries a fresh signed fileUrl (valid one hour). An unknown companyId gives an empty list.',
        querystring: schemas.ListDocumentsQuery,
        response: { 200: schemas.DocumentList, ...operationErrors('listDocuments') },
      },
    },
    async (request) => service.listDocuments(ctx, request.tenant, request.query),
  );
};
