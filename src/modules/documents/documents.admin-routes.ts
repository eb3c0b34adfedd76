import fastifyMultipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { FieldErrors } from '../../lib/errors.js';
import { unreadableFormError } from '../../lib/multipart-forms.js';
import { errorResponses } from '../../lib/schemas.js';
import * as schemas from './documents.schemas.js';
import { MAX_DOCUMENT_BYTES, storeDocument } from './documents.service.js';

/**
 * `POST /admin/v1/orders/{orderId}/documents` (DOC-4): the filing team uploads a document
 * returned by the state, multipart/form-data with `file` and `documentType`. The multipart parser is
 * registered in this plugin only; the rest of the API stays JSON-only.
 */
export const documentsAdminRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  await app.register(fastifyMultipart, { limits: { fileSize: MAX_DOCUMENT_BYTES, files: 1, fields: 5, parts: 6 } });

  app.post(
    '/orders/:orderId/documents',
    {
      schema: {
        tags: ['Filings'],
        summary: 'Upload a document for an order (multipart: file, documentType)',
        description:
          'Stores the file (PDF, PNG, JPEG or TIFF, at most 25 MB; the type is read from the bytes) and emits document.uploaded in one transaction.',
        params: schemas.OrderParams,
        response: { 201: schemas.DocumentSchema, ...errorResponses(404, 413) },
      },
    },
    async (request, reply) => {
      const form = await readForm(request);
      const { document } = await storeDocument(ctx, null, { orderId: request.params.orderId, ...form }, 'operator');
      return reply.status(201).send(document);
    },
  );
};

/** Reads the `file` part into memory and the text fields; names every missing field. */
async function readForm(
  request: FastifyRequest,
): Promise<{ documentType: string; fileName: string; fileType: string; bytes: Buffer }> {
  const errors = new FieldErrors();
  if (!request.isMultipart())
    errors.add('', 'send multipart/form-data with the fields file and documentType').throwIfAny();
  let file: { bytes: Buffer; fileName: string; fileType: string } | null = null;
  const fields: Record<string, string> = {};
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        const bytes = await part.toBuffer();
        if (part.fieldname === 'file') file = { bytes, fileName: part.filename, fileType: part.mimetype };
      } else if (typeof part.value === 'string') {
        fields[part.fieldname] = part.value;
      }
    }
  } catch (err) {
    // OPS-7: a form the parser cannot read is the client's 400, never a 500.
    throw unreadableFormError(err);
  }
  if (!file) errors.add('file', 'is required (a file part named file)');
  if (!fields.documentType) errors.add('documentType', 'is required');
  errors.throwIfAny();
  return { documentType: fields.documentType, ...file! };
}
