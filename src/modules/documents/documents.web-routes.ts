import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { AppError, notFound } from '../../lib/errors.js';
import { findLinkedDocument } from './documents.service.js';
import * as schemas from './documents.schemas.js';
import { documentStore } from './document-store.js';
import { peekStream, sniffFileType } from './file-storage.js';
import { checkFileLink, FILES_PATH } from './file-urls.js';

/**
 * `GET /files/{documentId}?expires=…&signature=…`: streams a document's file to whoever holds a valid
 * signed link (DOC-5), from the document store wherever it is (DOC-7: the link is the same for disk and S3). The signature is checked before the database is read; a bad signature or
 * an expired link answers 403, an unknown document 404, both in the one error body.
 */
export const documentWebRoutes: FastifyPluginAsyncTypebox<{ ctx: AppContext }> = async (app, { ctx }) => {
  app.get(
    `${FILES_PATH}/:documentId`,
    {
      schema: { hide: true, params: schemas.FileParams, querystring: schemas.FileQuery },
    },
    async (request, reply) => {
      const { documentId } = request.params;
      const check = checkFileLink(
        ctx.secrets.fileUrlSecret,
        documentId,
        request.query.expires,
        request.query.signature,
      );
      if (check === 'bad_signature')
        throw new AppError(
          'forbidden',
          'This file link is not valid; fetch the document again (GET /documents/{documentId}) for a fresh link',
        );
      if (check === 'expired')
        throw new AppError(
          'forbidden',
          'This file link has expired; fetch the document again (GET /documents/{documentId}) for a fresh link',
        );
      const doc = await findLinkedDocument(ctx.pool, documentId);
      const file = doc ? await documentStore(ctx.config).open(doc.storage_key) : null;
      if (!doc || !file) {
        if (doc) request.log.error({ documentId }, 'document file missing from storage');
        throw notFound('document', documentId);
      }
      // The first bytes tell what the file is (DOC-3); the rest streams from the store (disk or S3, DOC-7).
      const { head, stream } = await peekStream(file.stream, 16);
      const sniffedType = sniffFileType(head);
      const maxAge = Math.max(0, request.query.expires - Math.floor(Date.now() / 1000));
      // Only bytes that are what they claim open in the browser; a file accepted on its uploader's word (no known
      // signature) is a download of opaque bytes, so no browser ever renders or runs it on our origin.
      const known = sniffedType !== null && sniffedType === doc.file_type;
      return reply
        .header('content-type', known ? doc.file_type : 'application/octet-stream')
        .header('content-length', String(file.size))
        .header(
          'content-disposition',
          `${known ? 'inline' : 'attachment'}; filename="${asciiName(doc.file_name)}"; filename*=UTF-8''${encodeURIComponent(doc.file_name)}`,
        )
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', `private, max-age=${maxAge}`)
        .header('content-security-policy', "default-src 'none'; sandbox")
        .send(stream);
    },
  );
};

function asciiName(name: string): string {
  return name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
}
