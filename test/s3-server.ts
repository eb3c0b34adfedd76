import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

/** An S3-compatible server for one test file (s3rver, files in a temp directory) and its settings. */
export interface TestS3 {
  /** The variables that point the service at `bucket` under `prefix` (STORAGE_URL, S3_ENDPOINT, AWS keys). */
  env(prefix?: string): Record<string, string>;
  /** Object keys in the bucket, sorted. */
  keys(): Promise<string[]>;
  endpoint: string;
  bucket: string;
  close(): Promise<void>;
}

/** s3rver accepts this key pair only. */
const KEY = 'S3RVER';

/** Starts s3rver on a free port of 127.0.0.1 with one empty bucket `documents`. Close it in afterAll. */
export async function startTestS3(): Promise<TestS3> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'fcs-s3-'));
  const bucket = 'documents';
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  const { port } = (await server.run()) as { port: number };
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: KEY, secretAccessKey: KEY },
  });
  return {
    endpoint,
    bucket,
    env: (prefix = 'files') => ({
      STORAGE_URL: `s3://${bucket}/${prefix}`,
      S3_ENDPOINT: endpoint,
      AWS_ACCESS_KEY_ID: KEY,
      AWS_SECRET_ACCESS_KEY: KEY,
    }),
    async keys() {
      const res = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
      return (res.Contents ?? []).map((o) => o.Key!).sort();
    },
    async close() {
      client.destroy();
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
