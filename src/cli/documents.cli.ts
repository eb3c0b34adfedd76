import type { Command } from 'commander';
import { diskStore, documentStore } from '../modules/documents/document-store.js';
import { copyDocumentFiles } from '../modules/documents/storage-migration.js';
import { io, withContext } from './cli-context.js';

/**
 * `documents migrate-storage` (DOC-9): copies the document files kept on the local disk (STORAGE_DIR, or --from)
 * into the bucket of STORAGE_URL. Safe to run again: files already in the bucket are left alone.
 */
export function registerDocumentsCommands(program: Command): void {
  const documents = program.command('documents').description('Stored document files');
  documents
    .command('migrate-storage')
    .option('--from <dir>', 'the directory the files are in now (default: STORAGE_DIR)')
    .option('--json', 'print JSON')
    .description(
      'Copy every document file from the local disk into the S3 bucket of STORAGE_URL; files already there are skipped, so it can be run again',
    )
    .action((opts: { from?: string; json?: boolean }) =>
      withContext(async ({ ctx }) => {
        if (!ctx.config.objectStorage)
          throw new Error(
            'STORAGE_URL is not set: set it to the bucket to copy into (s3://bucket/prefix, with S3_ENDPOINT for stores other than AWS)',
          );
        const source = diskStore(opts.from ?? ctx.config.storageDir);
        const target = documentStore(ctx.config);
        const out = io(opts);
        const result = await copyDocumentFiles(ctx.pool, source, target, (id, outcome) => {
          if (!out.json && outcome === 'missing') process.stderr.write(`missing on disk and in the bucket: ${id}\n`);
        });
        out.print({ from: source.location, to: target.location, ...result }, () =>
          [
            `Copied ${result.copied} file(s) (${result.bytesCopied} bytes) from ${source.location} to ${target.location}; ${result.alreadyThere} already there.`,
            result.missing.length
              ? `${result.missing.length} document(s) have no file in either place (listed above).`
              : 'Every document has its file in the bucket.',
          ].join('\n'),
        );
        if (result.missing.length) process.exitCode = 1;
      }),
    );
}
