import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';

// Multipart upload bodies built part by part, so that a large file is streamed to the service as it is made (DOC-8).

const BOUNDARY = '----fcs-test-boundary';

/** The Content-Type of every body made here. */
export const MULTIPART_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

/** One text field of the form. */
export const fieldPart = (name: string, value: string) =>
  Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);

/** The headers of a file part named `file`; its bytes follow, then FILE_END. */
export const fileHead = (fileName: string, type = 'application/pdf') =>
  Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: ${type}\r\n\r\n`,
  );

/** What closes a file part. */
const FILE_END = Buffer.from('\r\n');

/** What closes the form. */
export const END = Buffer.from(`--${BOUNDARY}--\r\n`);

type Fields = Array<[string, string]>;

/**
 * A whole form as a stream: `before` fields, the file `fileName` from `chunks` (read only as the service reads the
 * request), `after` fields.
 */
export function multipartStream(
  before: Fields,
  fileName: string,
  chunks: Iterable<Buffer> | AsyncIterable<Buffer>,
  after: Fields = [],
): Readable {
  async function* body() {
    for (const [name, value] of before) yield fieldPart(name, value);
    yield fileHead(fileName);
    yield* chunks;
    yield FILE_END;
    for (const [name, value] of after) yield fieldPart(name, value);
    yield END;
  }
  return Readable.from(body());
}

/**
 * A file of `bytes` bytes that opens like a PDF (so it is stored as one), made in 64 KB chunks of random bytes each
 * marked with its index (so a chunk lost, doubled or moved changes the file), and the SHA-256 of the whole (hex).
 */
export function generatedFile(bytes: number): { chunks: () => Generator<Buffer>; sha256: string } {
  const block = randomBytes(64 * 1024);
  function* chunks() {
    for (let at = 0, i = 0; at < bytes; at += block.length, i++) {
      const chunk = Buffer.from(block.subarray(0, Math.min(block.length, bytes - at)));
      if (i === 0) chunk.write('%PDF-1.7\n');
      else if (chunk.length >= 4) chunk.writeUInt32BE(i, 0);
      yield chunk;
    }
  }
  const hash = createHash('sha256');
  for (const chunk of chunks()) hash.update(chunk);
  return { chunks, sha256: hash.digest('hex') };
}
