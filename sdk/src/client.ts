import createClient, { type Client } from 'openapi-fetch';
import { ConnectionError, errorFor, RedirectError } from './errors.js';
import { streamEvents, type EventStreamOptions, type StreamedEvent } from './event-stream.js';
import type { components, operations, paths } from './generated/openapi.js';
import { OPERATIONS, type OperationId } from './generated/operations.js';
import { pagePromise, type Page, type PagePromise } from './pagination.js';
import { withoutRedirects } from './redirects.js';
import { webhooks } from './webhooks.js';

/** The API's named schemas: `Schemas['User']`, `Schemas['OrderRequest']`, … */
export type Schemas = components['schemas'];

/** The environment a key belongs to, told by its prefix. */
export type Environment = 'live' | 'test';

/**
 * Where the SDK sends requests when `baseUrls` does not say otherwise: the addresses of a service started locally
 * with its defaults (`npm start`). Pass the deployment's addresses (its LIVE_BASE_URL and TEST_BASE_URL).
 */
export const DEFAULT_BASE_URLS: Record<Environment, string> = {
  live: 'http://localhost:3000/v1',
  test: 'http://localhost:3000/test/v1',
};

/** Options of {@link FilingCompliance}. Durations in milliseconds. */
export interface FilingComplianceOptions {
  /** An `sk_live_…` or `sk_test_…` key; its prefix picks the base address. */
  apiKey: string;
  /** Base address per environment (default DEFAULT_BASE_URLS). */
  baseUrls?: Partial<Record<Environment, string>>;
  /** A fetch implementation (default the global one). Redirects are never followed, whatever it does (RedirectError). */
  fetch?: typeof fetch;
  /** Per-request timeout (default 60000). */
  timeoutMs?: number;
}

/** Per-call options, the last argument of every method. */
export interface RequestOptions {
  /** POST and PUT only: the Idempotency-Key (default: a new UUID per call). Reuse it to retry a call safely. */
  idempotencyKey?: string;
  /** Cancels the request. */
  signal?: AbortSignal;
  /** Extra headers. */
  headers?: Record<string, string>;
}

type Op<K extends OperationId> = operations[K];
type Defined<T> = [T] extends [never]
  ? Record<never, never>
  : [Exclude<T, undefined>] extends [never]
    ? Record<never, never>
    : Exclude<T, undefined>;
/** The path and query parameters of an operation, as one object. */
export type ParamsOf<K extends OperationId> = Defined<Op<K>['parameters']['path']> &
  Defined<Op<K>['parameters']['query']>;
/** The JSON request body of an operation (never when it takes none). */
export type BodyOf<K extends OperationId> = [NonNullable<Op<K>['requestBody']>] extends [never]
  ? never
  : NonNullable<Op<K>['requestBody']> extends { content: { 'application/json': infer B } }
    ? B
    : never;
type Responses<K extends OperationId> = Op<K>['responses'];
type JsonOf<R> = R extends { content: { 'application/json': infer J } } ? J : undefined;
/** The JSON body of an operation's success answer. */
export type ResultOf<K extends OperationId> = JsonOf<Responses<K>[Extract<keyof Responses<K>, 200 | 201 | 202 | 204>]>;

type KindOf<K extends OperationId> = (typeof OPERATIONS)[K]['kind'];
type HasKeys<T> = keyof T extends never ? false : true;
type ParamsArg<K extends OperationId> =
  Record<never, never> extends ParamsOf<K> ? [params?: ParamsOf<K>] : [params: ParamsOf<K>];
type ArgsOf<K extends OperationId> = [BodyOf<K>] extends [never]
  ? HasKeys<ParamsOf<K>> extends true
    ? [...ParamsArg<K>, options?: RequestOptions]
    : [options?: RequestOptions]
  : HasKeys<ParamsOf<K>> extends true
    ? [params: ParamsOf<K>, body: BodyOf<K>, options?: RequestOptions]
    : [body: BodyOf<K>, options?: RequestOptions];
type ReturnOf<K extends OperationId> =
  KindOf<K> extends 'list'
    ? ResultOf<K> extends Page<unknown>
      ? PagePromise<ResultOf<K>>
      : never
    : Promise<ResultOf<K>>;

type StreamOperation = { [K in OperationId]: KindOf<K> extends 'stream' ? K : never }[OperationId];

/**
 * One typed method per operation of the API, named by its operationId: `createUser(body)`,
 * `getCompany({companyIdOrSlug})`, `updateCompany({companyIdOrSlug}, body)`, `listUsers({limit})`… Path and query
 * parameters come first as one object (when the operation has any), then the JSON body (when it takes one), then
 * RequestOptions. List methods return a PagePromise (await it for the first page, or `for await` over every item);
 * `streamEvents` yields events as they happen.
 */
export type OperationMethods = {
  [K in Exclude<OperationId, StreamOperation>]: (...args: ArgsOf<K>) => ReturnOf<K>;
} & {
  [K in StreamOperation]: (options?: EventStreamOptions) => AsyncGenerator<StreamedEvent>;
};

/** The environment of a key (`sk_live_…` or `sk_test_…`). @throws Error for any other shape. */
export function environmentOf(apiKey: string): Environment {
  if (apiKey.startsWith('sk_live_')) return 'live';
  if (apiKey.startsWith('sk_test_')) return 'test';
  throw new Error('apiKey must be an API key starting with sk_live_ or sk_test_');
}

// Declaration merging: the class's instances have every operation method (installed on the prototype below).
export interface FilingCompliance extends OperationMethods {}

/**
 * The Filing Compliance Service API client: `new FilingCompliance({ apiKey })`. The key's prefix picks the live or
 * test base address. Every method throws a typed FilingComplianceError (InvalidRequestError, NotFoundError, …,
 * carrying `code`, `requestId` and field `errors`) for an error answer, and ConnectionError when no answer came.
 * Every POST and PUT carries an Idempotency-Key (a new UUID unless RequestOptions.idempotencyKey sets one). No redirect
 * is followed, so the key never reaches another address: a 3xx answer throws RedirectError.
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface above adds the operation methods installed on the prototype.
export class FilingCompliance {
  /** The webhook helpers: constructEvent, signatureHeader, newSigningSecret. */
  static readonly webhooks = webhooks;
  /** The same as FilingCompliance.webhooks. */
  readonly webhooks = webhooks;
  /** The key's environment. */
  readonly environment: Environment;
  /** The base address requests go to. */
  readonly baseUrl: string;
  /** The underlying typed fetch client (openapi-fetch) for anything the methods do not cover. */
  readonly http: Client<paths>;
  private readonly apiKey: string;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;

  constructor(options: FilingComplianceOptions) {
    this.apiKey = options.apiKey;
    this.environment = environmentOf(options.apiKey);
    this.baseUrl = (options.baseUrls?.[this.environment] ?? DEFAULT_BASE_URLS[this.environment]).replace(/\/+$/, '');
    this.fetchImpl = withoutRedirects(options.fetch ?? globalThis.fetch);
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.http = createClient<paths>({
      baseUrl: this.baseUrl,
      fetch: this.fetchImpl,
      headers: { 'x-api-key': this.apiKey },
    });
  }

  /** Calls one operation by operationId with the arguments of its method (see OperationMethods). */
  async request(id: OperationId, args: unknown[]): Promise<unknown> {
    const spec = OPERATIONS[id];
    const { params, body, options } = splitArgs(spec, args);
    const pick = (names: readonly string[]) =>
      Object.fromEntries(names.filter((n) => params[n] !== undefined).map((n) => [n, params[n]]));
    const missing = spec.pathParams.filter((n) => params[n] === undefined || params[n] === '');
    if (missing.length) throw new TypeError(`${id}: missing path parameter ${missing.join(', ')}`);
    const headers: Record<string, string> = { ...options.headers };
    if (spec.method === 'POST' || spec.method === 'PUT')
      headers['idempotency-key'] = options.idempotencyKey ?? globalThis.crypto.randomUUID();
    const signal = options.signal
      ? AbortSignal.any([options.signal, AbortSignal.timeout(this.timeoutMs)])
      : AbortSignal.timeout(this.timeoutMs);
    let result: { data?: unknown; error?: unknown; response: Response };
    try {
      result = await (this.http.request as (m: string, p: string, init: unknown) => Promise<typeof result>)(
        spec.method,
        spec.path,
        {
          params: { path: pick(spec.pathParams), query: pick(spec.queryParams) },
          ...(spec.body ? { body } : {}),
          headers,
          signal,
        },
      );
    } catch (err) {
      if (err instanceof RedirectError) throw err;
      throw new ConnectionError(`${spec.method} ${this.baseUrl}${spec.path} failed: ${(err as Error).message}`, {
        cause: err,
      });
    }
    if (!result.response.ok) throw errorFor(result.response.status, result.error);
    return result.data;
  }
}

interface Split {
  params: Record<string, unknown>;
  body: unknown;
  options: RequestOptions;
}

// Mirrors ArgsOf: [params?] [body] [options?], params only when the operation has path or query parameters.
function splitArgs(spec: (typeof OPERATIONS)[OperationId], args: unknown[]): Split {
  const hasParams = spec.pathParams.length + spec.queryParams.length > 0;
  const list = [...args];
  const params = (hasParams ? list.shift() : undefined) as Record<string, unknown> | undefined;
  const body = spec.body ? list.shift() : undefined;
  const options = (list.shift() ?? {}) as RequestOptions;
  return { params: params ?? {}, body, options };
}

const proto = FilingCompliance.prototype as unknown as Record<
  string,
  (this: FilingCompliance, ...args: unknown[]) => unknown
>;
for (const id of Object.keys(OPERATIONS) as OperationId[]) {
  const spec = OPERATIONS[id];
  if (spec.kind === 'list') {
    const cursor = (spec as { cursor?: string }).cursor ?? 'id';
    proto[id] = function list(...args) {
      const split = splitArgs(spec, args);
      return pagePromise(
        cursor,
        (startingAfter) =>
          this.request(id, [
            { ...split.params, ...(startingAfter ? { startingAfter } : {}) },
            split.options,
          ]) as Promise<Page<unknown>>,
      );
    };
  } else if (spec.kind === 'stream') {
    proto[id] = function stream(options?: unknown) {
      const self = this as unknown as { apiKey: string; fetchImpl: typeof fetch };
      return streamEvents(
        { url: `${this.baseUrl}${spec.path}`, headers: { 'x-api-key': self.apiKey }, fetch: self.fetchImpl },
        (options ?? {}) as EventStreamOptions,
      );
    };
  } else {
    proto[id] = function call(...args) {
      return this.request(id, args);
    };
  }
}
