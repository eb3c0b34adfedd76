import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import type { Config, ObjectStorageConfig } from '../../config-types.js';

/**
 * Where document files are kept (DOC-7): the local disk under STORAGE_DIR, or an S3-compatible bucket when
 * STORAGE_URL is set (OPS-25). Keys are made by the service (storageKeyFor: `<environment>/<documentId>`), never
 * taken from a request. Every method streams: no file is ever held whole in memory.
 */
export interface DocumentStore {
  /** `disk` or `s3`, and where, for logs and the CLI (no secrets): e.g. `s3://bucket/prefix/`. */
  readonly location: string;
  /**
   * Writes `content` at `key`, replacing what was there. The file appears whole or not at all: a stream that errors
   * (too large, client gone) leaves nothing behind. @throws the stream's error, or the store's.
   */
  write(key: string, content: Readable, contentType: string): Promise<void>;
  /** A stream of the stored file and its size in bytes, or null when there is no such file. */
  open(key: string): Promise<{ stream: Readable; size: number } | null>;
  /** Size in bytes of the stored file, or null when there is none. */
  size(key: string): Promise<number | null>;
  /** Removes the file; a missing file is not an error. */
  remove(key: string): Promise<void>;
}

const stores = new WeakMap<Config, DocumentStore>();

/**
 * The document store of a configuration (DOC-7): S3 when `config.objectStorage` is set, else the disk under
 * `config.storageDir`. Made once per configuration object, so its S3 client and connections are reused.
 */
export function documentStore(config: Config): DocumentStore {
  let store = stores.get(config);
  if (!store) {
    store = config.objectStorage ? s3Store(config.objectStorage) : diskStore(config.storageDir);
    stores.set(config, store);
  }
  return store;
}

/** DOC-7: files under `dir` at their key, written to a temporary file first and renamed when complete (mode 0600). */
export function diskStore(dir: string): DocumentStore {
  const root = path.resolve(dir);
  // DOC-4: refuses keys that would leave the storage directory.
  const storagePath = (key: string) => {
    const full = path.resolve(root, key);
    if (!full.startsWith(root + path.sep)) throw new Error(`storage key escapes the storage directory: ${key}`);
    return full;
  };
  return {
    location: `disk ${root}`,
    async write(key, content) {
      const full = storagePath(key);
      await fs.promises.mkdir(path.dirname(full), { recursive: true });
      const tmp = `${full}.${randomBytes(6).toString('hex')}.tmp`;
      try {
        await pipeline(content, fs.createWriteStream(tmp, { mode: 0o600 }));
        await fs.promises.rename(tmp, full);
      } catch (err) {
        await fs.promises.rm(tmp, { force: true });
        throw err;
      }
    },
    async open(key) {
      const full = storagePath(key);
      const stat = await fs.promises.stat(full).catch(() => null);
      if (!stat?.isFile()) return null;
      return { stream: fs.createReadStream(full), size: stat.size };
    },
    async size(key) {
      const stat = await fs.promises.stat(storagePath(key)).catch(() => null);
      return stat?.isFile() ? stat.size : null;
    },
    async remove(key) {
      await fs.promises.rm(storagePath(key), { force: true });
    },
  };
}

/** Size of one part of a multipart upload, in bytes: the S3 minimum. At most two parts are held at a time. */
const PART_BYTES = 5 * 1024 * 1024;

/**
 * DOC-7, OPS-25: objects in an S3-compatible bucket at `<prefix><key>`. Uploads go through the SDK's managed upload
 * (one PUT for a small file, a multipart upload in 5 MB parts otherwise, aborted when the stream fails).
 */
export function s3Store(settings: ObjectStorageConfig): DocumentStore {
  // The AWS SDK is loaded on first use, so processes and CLI commands that keep files on disk never pay for it.
  let loaded: Promise<{ client: S3Client; s3: typeof import('@aws-sdk/client-s3') }> | null = null;
  const sdk = () => {
    loaded ??= import('@aws-sdk/client-s3').then((s3) => ({
      s3,
      client: new s3.S3Client({
        region: settings.region,
        forcePathStyle: settings.forcePathStyle,
        ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
        ...(settings.credentials ? { credentials: settings.credentials } : {}),
      }),
    }));
    return loaded;
  };
  const Bucket = settings.bucket;
  const objectKey = (key: string) => `${settings.prefix}${key}`;
  return {
    location: `s3://${Bucket}/${settings.prefix}`,
    async write(key, content, contentType) {
      const [{ client }, { Upload }] = await Promise.all([sdk(), import('@aws-sdk/lib-storage')]);
      const upload = new Upload({
        client,
        params: { Bucket, Key: objectKey(key), Body: content, ContentType: contentType },
        partSize: PART_BYTES,
        queueSize: 1,
      });
      // A stream that fails makes done() reject (and aborts a multipart upload); the caller's error is the stream's.
      let streamError: unknown = null;
      content.once('error', (err) => {
        streamError = err;
      });
      try {
        await upload.done();
      } catch (err) {
        throw streamError ?? err;
      }
      if (streamError) throw streamError;
    },
    async open(key) {
      const { client, s3 } = await sdk();
      try {
        const res = await client.send(new s3.GetObjectCommand({ Bucket, Key: objectKey(key) }));
        return { stream: res.Body as Readable, size: Number(res.ContentLength ?? 0) };
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
    },
    async size(key) {
      const { client, s3 } = await sdk();
      try {
        const res = await client.send(new s3.HeadObjectCommand({ Bucket, Key: objectKey(key) }));
        return Number(res.ContentLength ?? 0);
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
    },
    async remove(key) {
      const { client, s3 } = await sdk();
      await client.send(new s3.DeleteObjectCommand({ Bucket, Key: objectKey(key) }));
    },
  };
}

function isMissing(err: unknown): boolean {
  const e = err as Partial<S3ServiceException>;
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
}
