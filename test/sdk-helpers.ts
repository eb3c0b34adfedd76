import type { AddressInfo } from 'node:net';
import { FilingCompliance } from '../sdk/src/index.js';
import type { TestApp } from './harness.js';

/** Makes the test app listen on a free port of 127.0.0.1 (once) and returns its origin, e.g. http://127.0.0.1:41234. */
export async function listening(t: TestApp): Promise<string> {
  if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}

/** The base addresses of a listening test app, as the SDK takes them. */
export const baseUrlsOf = (origin: string) => ({ live: `${origin}/v1`, test: `${origin}/test/v1` });

/** An SDK client for `apiKey` against the listening test app. */
export function sdkClient(origin: string, apiKey: string): FilingCompliance {
  return new FilingCompliance({ apiKey, baseUrls: baseUrlsOf(origin) });
}
