import type { SwaggerOptions } from '@fastify/swagger';
import type { AppContext } from '../context.js';
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

**Rate limits.** Requests are counted per API key in fixed windows (default 1200 per minute). Every answer carries
\`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\` (seconds until the window ends), the IETF
draft's header fields; beyond the limit the answer is 429 (code \`rate_limited\`) with \`Retry-After\` in seconds.

**Environments and settings.** Organization settings (PATCH /organization) are one set shared by both environments
and reach live customers, so they change only with a live key; with a test key the answer is 403.

**Webhooks.** Each request carries \`Service-Signature: t={unix seconds},v1={hex HMAC-SHA256 of "{t}.{raw body}"}\`
keyed with the endpoint's whole \`whsec_\` secret (the scheme Stripe's \`webhooks.constructEvent\` verifies). During
the 24 hours after a secret rotation two \`v1=\` entries are sent. Failed deliveries are retried with backoff;
ordering is not guaranteed, so deduplicate on the event id.`;

/**
 * @fastify/swagger options: an OpenAPI 3.1 document of the integrator API, generated from the route schemas.
 * Paths are relative to the base addresses (live and test servers); admin and browser routes are left out;
 * test helpers are documented with the test server only. Schemas with a `title` become named components
 * (`#/components/schemas/User`, …; see openapi-components.ts) while the routes keep their inline schemas.
 */
export function buildOpenApiOptions(ctx: AppContext, livePrefix: string, testPrefix: string): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Filing Compliance Service API', version: '1.6.0', description: API_DESCRIPTION },
      servers: [
        { url: ctx.config.liveBaseUrl, description: 'Live' },
        { url: ctx.config.testBaseUrl, description: 'Test' },
      ],
      components: {
        securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'sk_live_… or sk_test_… key' } },
      },
      security: [{ apiKey: [] }],
      tags: [
        { name: 'Users' }, { name: 'Companies' }, { name: 'Orders' }, { name: 'Prices' }, { name: 'Organization' },
        { name: 'Balance' }, { name: 'Documents' }, { name: 'Events' }, { name: 'Webhook Endpoints' },
        { name: 'Webhook Deliveries' }, { name: 'Auth' },
        { name: 'Test helpers', description: 'Only at the test base address; the live address answers 404.' },
      ],
    },
    // Shared schemas keep their $id as the component name (#/components/schemas/Error, not def-0).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transform: ({ schema, url }) => {
      const s = (schema ?? {}) as Record<string, unknown>;
      const helpers = `${testPrefix}/test_helpers`;
      if (url.startsWith(helpers)) {
        return { schema: { ...s, tags: ['Test helpers'], servers: [{ url: ctx.config.testBaseUrl }] }, url: url.slice(testPrefix.length) };
      }
      if (url.startsWith(`${livePrefix}/`) && !url.startsWith(`${testPrefix}/`)) return { schema: s, url: url.slice(livePrefix.length) };
      return { schema: { ...s, hide: true }, url };
    },
    transformObject: (document) => liftTitledSchemas('openapiObject' in document ? document.openapiObject : document.swaggerObject),
  };
}
