import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { FieldErrors } from '../../lib/errors.js';
import { unreadableFormError } from '../../lib/multipart-forms.js';
import {
  discardStagedFile,
  MAX_DOCUMENT_BYTES,
  stageDocumentFile,
  type DocumentOwnerRef,
  type StagedDocumentFile,
} from './documents.service.js';

/**
 * Limits of a document upload form, for @fastify/multipart (DOC-3, OPS-7): one file, a few fields. The file may run
 * one byte past MAX_DOCUMENT_BYTES, so that the service's own byte counter answers 413 naming the field and keeps
 * nothing (DOC-8).
 */
const DOCUMENT_FORM_LIMITS = { fileSize: MAX_DOCUMENT_BYTES + 1, files: 1, fields: 5, parts: 6 };

/** A document upload form read whole: its file staged in the store (not yet recorded) and its text fields. */
export interface DocumentForm {
  staged: StagedDocumentFile;
  fields: Record<string, string>;
}

/**
 * Checks a caller makes of a form before its file reaches the store, given the text fields read so far and the file's
 * name (or null when the form has no file: then it runs after the whole form). The console checks its CSRF token here,
 * so a form whose token does not come before its file stores nothing (AUTH-10, DOC-10).
 */
export type DocumentFormCheck = (fields: Record<string, string>, fileName: string | null) => void;

/**
 * DOC-8: reads a multipart upload form (the admin API's and the console's), streaming its `file` part into the
 * document store as it arrives (stageDocumentFile: never whole in memory, 413 past 25 MB) and collecting the text
 * fields, which may come before or after it. `check` runs once, before the file is staged. A file staged before a
 * later failure is removed again; the caller records it (recordDocument) or discards it (discardStagedFile).
 * @throws 400 validation_error naming `file` and `documentType` when missing; 400 bad_request for a form that cannot
 *   be read (OPS-7); what `check` throws; stageDocumentFile's refusals (404, 400, 413, 415, 503).
 */
export async function readDocumentForm(
  ctx: AppContext,
  request: FastifyRequest,
  ref: DocumentOwnerRef,
  check?: DocumentFormCheck,
): Promise<DocumentForm> {
  const errors = new FieldErrors();
  if (!request.isMultipart())
    errors.add('', 'send multipart/form-data with the fields file and documentType').throwIfAny();
  let staged: StagedDocumentFile | null = null;
  let checked = false;
  const fields: Record<string, string> = {};
  try {
    try {
      for await (const part of request.parts({ limits: DOCUMENT_FORM_LIMITS })) {
        if (part.type === 'file') {
          if (part.fieldname !== 'file' || staged) {
            part.file.resume();
            continue;
          }
          checked = true;
          try {
            check?.(fields, part.filename);
          } catch (err) {
            part.file.resume();
            throw err;
          }
          staged = await stageDocumentFile(ctx, null, ref, {
            content: part.file,
            fileName: part.filename,
            fileType: part.mimetype,
          });
        } else if (typeof part.value === 'string') {
          fields[part.fieldname] = part.value;
        }
      }
    } catch (err) {
      // OPS-7: a form the parser cannot read is the client's 400, never a 500.
      throw unreadableFormError(err);
    }
    if (!checked) check?.(fields, null);
    if (!staged) errors.add('file', 'is required (a file part named file)');
    if (!fields.documentType) errors.add('documentType', 'is required');
    errors.throwIfAny();
  } catch (err) {
    if (staged) await discardStagedFile(ctx, staged);
    throw err;
  }
  return { staged: staged!, fields };
}
