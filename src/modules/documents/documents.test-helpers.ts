import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ApiPluginOptions } from '../../context.js';
import { operation, operationErrors } from '../../lib/api-operations.js';
import * as schemas from './documents.schemas.js';
import { storeSampleDocument } from './documents.service.js';

/** POST /test_helpers/orders/{orderId}/documents (DOC-4, TEN-4): mounted only at the test base address. */
export const documentTestHelperRoutes: FastifyPluginAsyncTypebox<ApiPluginOptions> = async (
  app,
  { ctx, environment },
) => {
  // Defence in depth: app.ts mounts helpers only for test; a live mount would register nothing (404).
  if (environment !== 'test') return;
  app.post(
    '/orders/:orderId/documents',
    {
      schema: {
        ...operation('createTestDocument'),
        summary: 'Attach a generated document to an order (test only)',
        description:
          'Makes a small real PDF (title, company legal name, order id, date) of the given type, attaches it to the order and emits document.uploaded, as a state-issued document would. Only at the test base address; the live address answers 404.',
        params: schemas.OrderParams,
        body: schemas.SampleDocumentBody,
        response: { 201: schemas.DocumentSchema, ...operationErrors('createTestDocument') },
      },
    },
    async (request, reply) => {
      const { document } = await storeSampleDocument(
        ctx,
        request.tenant,
        request.params.orderId,
        request.body.documentType,
        'test_helper',
      );
      return reply.status(201).send(document);
    },
  );
};
