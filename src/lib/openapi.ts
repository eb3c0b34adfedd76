import type { SwaggerOptions } from '@fastify/swagger';
import { pathPrefix } from '../config.js';
import type { AppContext, Environment } from '../context.js';
import { API_TAGS } from './api-operations.js';
import { openApiWebhooks } from '../modules/webhooks/webhook-payloads.js';
import { liftTitledSchemas } from './openapi-components.js';

const API_DESCRIPTION = `Server-to-server API for forming companies and keeping them compliant with US states.

**Environments.** Live requests go to the live base address with an \`sk_live_\` key; test requests to the test
base address with an \`sk_test_\` key. A key used at the other environment's address is refused with 401 and a
message naming the right address. In test, filings never advance on their own: use the test helpers.

**Errors.** Every error has the body \`{message, code, requestId}\`; validation failures add
\`errors: [{field, message}]\` naming every bad field. 5xx bodies never carry internal details.

**Money.** Amounts are JSON numbers of US dollars with at most two decimals.

**Pagination.** List endpoints return \`{object: "list", data, hasMore}\`, newest first; pass \`limit\` (1-100,
default 20) and \`startingAfter\` (the last id of the previous page).

**Idempotency.** POST requests accept an \`Idempotency-Key\` header: the same key and body within 24 hours
replays the first response; the same key with another body answers 422; a retry while the first request is
still running answers 409.

**Streaming.** \`GET /events/stream\` sends the same events as Server-Sent Events while the connection is open;
reconnect with \`Last-Event-ID\` and nothing is missed (the SDK's \`filing-compliance listen\` forwards them to a local
URL, signed like webhooks).

**Rate limits.** Requests are counted per API key in fixed windows (default 1200 per minute). Every answer carries
\`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\` (seconds until the window ends), the IETF
draft's header fields; beyond the limit the answer is 429 (code \`rate_limited\`) with \`Retry-After\` in seconds.
A client address whose requests were refused with 401 too often in a window (default 20) gets 429 with
\`Retry-After\` for every request until the window ends, whatever key it sends.

**Environments and settings.** Organization settings (PATCH /organization) are one set shared by both environments
and reach live customers, so they change only with a live key; with a test key the answer is 403.

**Request ids.** Every answer carries \`X-Request-Id\`, made by the server (it is \`requestId\` in error bodies); quote
it when asking for help. An \`X-Request-Id\` you send is not adopted: it is logged beside ours.

**Webhooks.** Each request carries \`Service-Signature: t={unix seconds},v1={hex HMAC-SHA256 of "{t}.{raw body}"}\`
keyed with the endpoint's whole \`whsec_\` secret (the scheme Stripe's \`webhooks.constructEvent\` verifies). During
the 24 hours after a secret rotation two \`v1=\` entries are sent, the new secret's first, so a parser that
keeps only the first entry verifies with the new secret. Failed deliveries are retried with backoff;
ordering is not guaranteed, so deduplicate on the event id.`;

/** Host names that only mean something on the machine that runs the service. */
const LOCAL_HOST = /^(localhost|.*\.localhost|127(\.\d{1,3}){3}|0\.0\.0\.0|\[::1?\])$/;

/**
 * The server URL published for a base address (LIVE_BASE_URL or TEST_BASE_URL). A public address is published as
 * is. A machine-local one (the development default, http://localhost:3000/v1) is published as its path only
 * (`/v1`): OpenAPI resolves a relative server URL against the address the document was fetched from, so a
 * client that fetched it from any host reaches that same host, where `localhost` would send it to its own machine.
 */
export function publishedServerUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  return LOCAL_HOST.test(url.hostname) ? pathPrefix(baseUrl) || '/' : baseUrl;
}

const SERVER_DESCRIPTIONS: Record<Environment, string> = {
  live: 'Live: sk_live_ keys, real filings and real money.',
  test: 'Test: sk_test_ keys; filings advance only through the test helpers.',
};

const serverOf = (ctx: AppContext, environment: Environment) => ({
  url: publishedServerUrl(environment === 'live' ? ctx.config.liveBaseUrl : ctx.config.testBaseUrl),
  description: SERVER_DESCRIPTIONS[environment],
});

/**
 * @fastify/swagger options: an OpenAPI 3.1 document of the integrator API, generated from the route schemas.
 * Paths are relative to the base addresses (live and test servers); admin and browser routes are left out (the
 * admin API is the operators', with another credential; integrators and their code generators never call it);
 * test helpers carry the test server only. Schemas with a `title` become named components
 * (`#/components/schemas/User`, …; see openapi-components.ts) while the routes keep their inline schemas.
 * This whole document is what /docs shows; each base address serves its environment's cut (publishedDocument).
 */
export function buildOpenApiOptions(ctx: AppContext, livePrefix: string, testPrefix: string): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Filing Compliance Service API',
        version: '1.6.0',
        description: API_DESCRIPTION,
        contact: { name: 'Filing Compliance Service API support' },
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers: [serverOf(ctx, 'live'), serverOf(ctx, 'test')],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'sk_live_… or sk_test_… key' },
        },
      },
      security: [{ apiKey: [] }],
      tags: Object.entries(API_TAGS).map(([name, description]) => ({ name, description })),
    },
    // Shared schemas keep their $id as the component name (#/components/schemas/Error, not def-0).
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
    transform: ({ schema, url }) => {
      const s = (schema ?? {}) as Record<string, unknown>;
      const helpers = `${testPrefix}/test_helpers`;
      if (url.startsWith(helpers))
        return { schema: { ...s, servers: [serverOf(ctx, 'test')] }, url: url.slice(testPrefix.length) };
      if (url.startsWith(`${livePrefix}/`) && !url.startsWith(`${testPrefix}/`))
        return { schema: s, url: url.slice(livePrefix.length) };
      return { schema: { ...s, hide: true }, url };
    },
    transformObject: (document) => {
      const doc = 'openapiObject' in document ? document.openapiObject : document.swaggerObject;
      return withoutPropertyDefaults(liftTitledSchemas({ ...doc, webhooks: openApiWebhooks() } as typeof doc));
    },
  };
}

// biome-ignore lint/suspicious/noExplicitAny: OpenAPI documents are JSON of any shape, walked key by key.
type Json = Record<string, any>;

/**
 * OPS-27: the document with no `default` on an object's properties: code generators (openapi-typescript by default)
 * make a property with a default required, so a client would have to send `expedited` on every order. The default is
 * said in the property's description instead ("Default false."), and the request validator still applies it (the
 * route schemas are not changed: this makes a copy). Defaults of query parameters stay: they never make a field
 * required.
 */
function withoutPropertyDefaults<T>(node: T): T {
  if (Array.isArray(node)) return node.map(withoutPropertyDefaults) as T;
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node as Json)) {
    if (key === 'properties' && value && typeof value === 'object' && !Array.isArray(value)) {
      out[key] = Object.fromEntries(
        Object.entries<Json>(value).map(([name, prop]) => [name, withoutPropertyDefaults(describedDefault(prop))]),
      );
    } else out[key] = withoutPropertyDefaults(value);
  }
  return out as T;
}

// A property schema without `default`, its description saying the default when it did not already.
function describedDefault(prop: Json): Json {
  if (!prop || typeof prop !== 'object' || !('default' in prop)) return prop;
  const { default: value, ...rest } = prop;
  const said = typeof rest.description === 'string' && /\bdefault/i.test(rest.description);
  return said
    ? rest
    : { ...rest, description: `${rest.description ? `${rest.description} ` : ''}Default ${JSON.stringify(value)}.` };
}

const TEST_HELPERS_TAG = 'Test helpers';
const published = new WeakMap<object, Partial<Record<Environment, Json>>>();

/**
 * The document one environment publishes at `<base address>/openapi.json`: only that environment's server, so a
 * code generator (which takes the first server as the default address) never points a test integration at live;
 * the live document leaves the test helpers out, since the live address answers 404 to them. Derived from the
 * whole document (`app.swagger()`, which it never modifies) once per environment.
 */
export function publishedDocument(whole: object, ctx: AppContext, environment: Environment): Json {
  const cache = published.get(whole) ?? {};
  published.set(whole, cache);
  if (cache[environment]) return cache[environment];
  const doc = whole as Json;
  const paths: Json = {};
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    const kept: Json = {};
    for (const [method, op] of Object.entries<Json>(item)) {
      const helper = Array.isArray(op?.tags) && op.tags.includes(TEST_HELPERS_TAG);
      if (helper && environment === 'live') continue;
      // One server for the whole document: the test helper's own server entry would only repeat it.
      if (helper) {
        const { servers: _servers, ...rest } = op;
        kept[method] = rest;
      } else kept[method] = op;
    }
    if (Object.keys(kept).length) paths[path] = kept;
  }
  const tags = (doc.tags as Json[]).filter((t) => environment === 'test' || t.name !== TEST_HELPERS_TAG);
  const schemas = usedSchemas({ paths, webhooks: doc.webhooks }, doc.components?.schemas ?? {});
  cache[environment] = {
    ...doc,
    servers: [serverOf(ctx, environment)],
    tags,
    paths,
    components: { ...doc.components, schemas },
  };
  return cache[environment];
}

const SCHEMA_REF = '#/components/schemas/';

/** The component schemas that `roots` (paths, webhooks) reference, directly or through other components (the rest would be dead weight). */
function usedSchemas(roots: Json, all: Json): Json {
  const used = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const ref = (node as Json).$ref;
    if (typeof ref === 'string' && ref.startsWith(SCHEMA_REF)) {
      const name = ref.slice(SCHEMA_REF.length);
      if (!used.has(name)) {
        used.add(name);
        walk(all[name]);
      }
    }
    Object.values(node).forEach(walk);
  };
  walk(roots);
  return Object.fromEntries(Object.entries(all).filter(([name]) => used.has(name)));
}
