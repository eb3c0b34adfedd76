import type { Db } from '../../lib/db.js';
import type { DocumentStore } from './document-store.js';
import { listStoredFiles } from './documents.repo.js';

/** What one run of copyDocumentFiles did, in documents (DOC-9). */
export interface StorageMigrationResult {
  /** Copied to the target now. */
  copied: number;
  /** Already in the target with the recorded size: left alone (a re-run copies nothing twice). */
  alreadyThere: number;
  /** In neither store: listed by id so an operator can look into them. */
  missing: string[];
  /** Bytes copied. */
  bytesCopied: number;
}

/** Documents read from the database at a time. */
const BATCH = 200;

/**
 * DOC-9: copies every document's file from `source` (the local disk) into `target` (the bucket), one at a time and
 * streamed. A file the target already holds at the size the documents table recorded is skipped, so the copy can be
 * stopped and run again; one missing from the source but present in the target counts as already there. Reads the
 * documents table in keyset pages through `db` (no connection is held while a file is copied). Nothing is deleted.
 * @param onFile called after each document with its id and what happened, for progress output.
 * @throws the first error of a store other than a missing file (the run can be repeated from the start).
 */
export async function copyDocumentFiles(
  db: Db,
  source: DocumentStore,
  target: DocumentStore,
  onFile: (documentId: string, outcome: 'copied' | 'already_there' | 'missing') => void = () => undefined,
): Promise<StorageMigrationResult> {
  const result: StorageMigrationResult = { copied: 0, alreadyThere: 0, missing: [], bytesCopied: 0 };
  let after = '';
  for (;;) {
    const rows = await listStoredFiles(db, after, BATCH);
    if (!rows.length) return result;
    for (const row of rows) {
      after = row.id;
      if ((await target.size(row.storage_key)) === row.size_bytes) {
        result.alreadyThere++;
        onFile(row.id, 'already_there');
        continue;
      }
      const file = await source.open(row.storage_key);
      if (!file) {
        result.missing.push(row.id);
        onFile(row.id, 'missing');
        continue;
      }
      await target.write(row.storage_key, file.stream, row.file_type);
      result.copied++;
      result.bytesCopied += file.size;
      onFile(row.id, 'copied');
    }
  }
}
