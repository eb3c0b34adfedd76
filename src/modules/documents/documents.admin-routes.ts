import fastifyMultipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { errorResponses } from '../../lib/schemas.js';
import { readDocumentForm } from './document-form.js';
import * as schemas from './documents.schemas.js';
import { recordDocument } from './documents.service.js';

/**
 * `POST /admin/v1/orders/{orderId}/documents` (DOC-4): the filing team uploads a document
 * returned by the state, multipart/form-data with `file` and `documentType`. The multipart parser is
 * registered in this plugin only; the rest of the API stays JSON-only.
 */
export const documentsAdminRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  // The form's limits are readDocumentForm's (DOCUMENT_FORM_LIMITS), the console's too.
  await app.register(fastifyMultipart);

  app.post(
    '/orders/:orderId/documents',
    {
      schema: {
        tags: ['Filings'],
        summary: 'Upload a document for an order (multipart: file, documentType)',
        description:
          'Stores the file (PDF, PNG, JPEG or TIFF, at most 25 MB; the type is read from the bytes) in the document store as it arrives, then records the document and emits document.uploaded in one transaction. A failed upload leaves no document.',
        params: schemas.OrderParams,
        response: { 201: schemas.DocumentSchema, ...errorResponses(404, 413) },
      },
    },
    async (request, reply) => {
      const { staged, fields } = await readDocumentForm(ctx, request, { orderId: request.params.orderId });
      const { document } = await recordDocument(ctx, staged, fields.documentType!, 'operator');
      return reply.status(201).send(document);
    },
  );
};
