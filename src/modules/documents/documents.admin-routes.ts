import fastifyMultipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { FieldErrors } from '../../lib/errors.js';
import { unreadableFormError } from '../../lib/multipart-forms.js';
import { errorResponses } from '../../lib/schemas.js';
import * as schemas from './documents.schemas.js';
import {
  discardStagedFile,
  MAX_DOCUMENT_BYTES,
  recordDocument,
  stageDocumentFile,
  type StagedDocumentFile,
} from './documents.service.js';

/**
 * `POST /admin/v1/orders/{orderId}/documents` (DOC-4): the filing team uploads a document
 * returned by the state, multipart/form-data with `file` and `documentType`. The multipart parser is
 * registered in this plugin only; the rest of the API stays JSON-only.
 */
export const documentsAdminRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  // One byte past the limit reaches the service, which answers 413 (DOC-3) and keeps nothing (DOC-8).
  await app.register(fastifyMultipart, {
    limits: { fileSize: MAX_DOCUMENT_BYTES + 1, files: 1, fields: 5, parts: 6 },
  });

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
      const { staged, documentType } = await readForm(ctx, request, request.params.orderId);
      const { document } = await recordDocument(ctx, staged, documentType, 'operator');
      return reply.status(201).send(document);
    },
  );
};

/**
 * Reads the form, streaming the `file` part into the document store as it arrives (DOC-8: never whole in memory),
 * and the text fields, which may come before or after it. Names every missing field; a file stored before a
 * failure is removed again.
 */
async function readForm(
  ctx: AppContext,
  request: FastifyRequest,
  orderId: string,
): Promise<{ staged: StagedDocumentFile; documentType: string }> {
  const errors = new FieldErrors();
  if (!request.isMultipart())
    errors.add('', 'send multipart/form-data with the fields file and documentType').throwIfAny();
  let staged: StagedDocumentFile | null = null;
  const fields: Record<string, string> = {};
  try {
    try {
      for await (const part of request.parts()) {
        if (part.type === 'file') {
          if (part.fieldname === 'file' && !staged)
            staged = await stageDocumentFile(
              ctx,
              null,
              { orderId },
              {
                content: part.file,
                fileName: part.filename,
                fileType: part.mimetype,
              },
            );
          else part.file.resume();
        } else if (typeof part.value === 'string') {
          fields[part.fieldname] = part.value;
        }
      }
    } catch (err) {
      // OPS-7: a form the parser cannot read is the client's 400, never a 500.
      throw unreadableFormError(err);
    }
    if (!staged) errors.add('file', 'is required (a file part named file)');
    if (!fields.documentType) errors.add('documentType', 'is required');
    errors.throwIfAny();
  } catch (err) {
    if (staged) await discardStagedFile(ctx, staged);
    throw err;
  }
  return { staged: staged!, documentType: fields.documentType! };
}
