import { Type, type TSchema } from '@sinclair/typebox';
import { ERROR_STATUS, type ErrorCode } from './errors.js';

/*
 * The one list of the integrator API's operations: each operation's operationId (the method name code generators
 * and our SDK give it), its tag, and every error code it can answer. Route files spread `operation(id)` into their
 * schema and put `operationErrors(id)` beside their success responses, so the served OpenAPI document, the
 * serializers of the error bodies and this catalogue cannot disagree. Summaries and descriptions stay in the route
 * files, next to the behaviour they describe.
 *
 * operationIds are public: generated clients name their methods after them, so renaming one breaks every
 * integrator's code. Add new operations; never rename existing ones.
 */

/** The tags of the published documents, in the order API references show them, each with its description. */
export const API_TAGS = {
  Organization:
    "Your organization: settings and dashboard branding (shared by both environments) and the prepaid balance of the key's environment.",
  Users: 'The people of your platform who own companies. Emails are unique per environment.',
  Companies: 'Companies owned by your users, addressable by id or by their readable slug.',
  Orders:
    'State filings (formation, EIN, annual report, registered agent, foreign qualification), priced and debited from the prepaid balance.',
  Prices: 'Retail prices your customers see at dashboard checkout, and which formation packages are offered there.',
  Balance:
    'The prepaid balance: top-ups paid by card or US bank account through Stripe Checkout, automatic recharges of the live balance with a saved card or bank account, and its ledger (credits, one debit per priced order line, reversals of cancelled orders, clawbacks of disputed or refunded top-ups).',
  Compliance:
    'State report deadlines of your companies (annual, biennial and initial reports), computed from researched state rules, with reminders as webhook events.',
  Documents: 'State-issued documents attached to orders, each with a signed download address valid for one hour.',
  Events: 'Everything webhooks report, kept for reconciliation (GET /events) and streamed live (GET /events/stream).',
  'Webhook Endpoints': "Where events are POSTed, signed with the endpoint's whsec_ secret (header Service-Signature).",
  'Webhook Deliveries':
    'Each event sent to each endpoint, with every attempt, status code and response; resend on demand.',
  Authentication: 'Dashboard access for your users: single-use magic links, no passwords.',
  'Test helpers':
    'Only at the test base address (the live address answers 404): play the filing team and the bank in test mode.',
} as const;

/** One of the declared tags. */
export type ApiTag = keyof typeof API_TAGS;

/** An operation's tag and every error code it can answer (common ones included: see the groups below). */
export interface OperationSpec {
  tag: ApiTag;
  errors: readonly ErrorCode[];
}

// Every operation sits behind the API-key check and the per-key rate limit, any request can fail inside, and
// while the database is unreachable requests answer 503 at once instead of hanging. Any request can also be
// malformed before a route sees it (a path that is not valid percent-encoded UTF-8, a request line and headers
// above 16 KB): 400 bad_request.
const ANY: readonly ErrorCode[] = [
  'bad_request',
  'unauthorized',
  'wrong_environment',
  'rate_limited',
  'internal_error',
  'service_unavailable',
];
// Path or query parameters are validated against the route schema.
const PARAMS: readonly ErrorCode[] = [...ANY, 'validation_error'];
// A JSON body can be malformed, of another media type or too large, besides failing validation.
const BODY: readonly ErrorCode[] = [...PARAMS, 'bad_request', 'unsupported_media_type', 'payload_too_large'];
// Every POST and PUT takes an Idempotency-Key (IDEM-1; its retry may be running, reused with another body, or its
// stored answer unreadable).
const POST: readonly ErrorCode[] = [...BODY, 'idempotency_key_in_use', 'idempotency_key_reused', 'conflict'];

const op = (tag: ApiTag, base: readonly ErrorCode[], ...extra: ErrorCode[]): OperationSpec => ({
  tag,
  errors: [...new Set([...base, ...extra])],
});

// The example of bad_request for operations without a body (CODE_EXAMPLES has the JSON one).
const MALFORMED_URL_EXAMPLE: { summary: string; message: string; extra?: Record<string, unknown> } = {
  summary: 'The URL is not valid',
  message: 'The URL is not valid: a path segment is not valid percent-encoded UTF-8',
};

/** Every operation of the integrator API by operationId (camelCase verbNoun, as generated SDK methods read). */
export const OPERATIONS = {
  getOrganization: op('Organization', ANY),
  updateOrganization: op('Organization', BODY, 'forbidden', 'conflict'),
  verifyWhiteLabelDomain: op('Organization', POST, 'forbidden', 'domain_not_verified'),

  createUser: op('Users', POST, 'conflict'),
  listUsers: op('Users', PARAMS),
  getUser: op('Users', PARAMS, 'not_found'),

  createCompany: op('Companies', POST, 'not_found'),
  listCompanies: op('Companies', PARAMS),
  getCompany: op('Companies', PARAMS, 'not_found'),
  updateCompany: op('Companies', BODY, 'not_found'),

  createOrder: op(
    'Orders',
    POST,
    'insufficient_balance',
    'forbidden',
    'not_found',
    'ein_already_requested',
    'qualification_already_paid',
  ),
  quoteOrder: op('Orders', POST, 'forbidden', 'not_found', 'ein_already_requested', 'qualification_already_paid'),
  correctEinResponsibleParty: op('Orders', POST, 'not_found', 'invalid_transition'),

  listPrices: op('Prices', ANY),
  updatePrice: op('Prices', POST, 'price_below_floor', 'not_found'),
  deletePrice: op('Prices', PARAMS, 'not_found'),

  listBalanceTransactions: op('Balance', PARAMS, 'not_found'),
  getAutoRecharge: op('Balance', ANY),
  updateAutoRecharge: op('Balance', POST, 'forbidden'),
  setUpAutoRechargeMethod: op('Balance', POST, 'forbidden'),
  createTopUp: op('Balance', POST),
  listTopUps: op('Balance', PARAMS, 'not_found'),
  getTopUp: op('Balance', PARAMS, 'not_found'),
  getBalanceStatement: op('Balance', PARAMS, 'not_found'),

  getComplianceCalendar: op('Compliance', PARAMS, 'not_found', 'conflict'),
  listComplianceDeadlines: op('Compliance', PARAMS),

  getDocument: op('Documents', PARAMS, 'not_found'),
  listDocuments: op('Documents', PARAMS),

  listEvents: op('Events', PARAMS),
  getEvent: op('Events', PARAMS, 'not_found'),
  streamEvents: op('Events', PARAMS, 'not_found', 'rate_limited'),

  createWebhookEndpoint: op('Webhook Endpoints', POST, 'webhook_endpoint_limit_reached'),
  listWebhookEndpoints: op('Webhook Endpoints', PARAMS),
  getWebhookEndpoint: op('Webhook Endpoints', PARAMS, 'not_found'),
  updateWebhookEndpoint: op('Webhook Endpoints', BODY, 'not_found'),
  deleteWebhookEndpoint: op('Webhook Endpoints', PARAMS, 'not_found'),
  rotateWebhookEndpointSecret: op('Webhook Endpoints', POST, 'not_found'),
  sendTestWebhookEvent: op('Webhook Endpoints', POST, 'not_found'),

  listWebhookDeliveries: op('Webhook Deliveries', PARAMS),
  getWebhookDelivery: op('Webhook Deliveries', PARAMS, 'not_found'),
  resendWebhookDelivery: op('Webhook Deliveries', POST, 'not_found'),

  createMagicLink: op('Authentication', POST, 'forbidden', 'not_found'),

  createTestBalanceCredit: op('Test helpers', POST),
  advanceTestOrder: op('Test helpers', POST, 'not_found', 'invalid_transition'),
  createTestDocument: op('Test helpers', POST, 'not_found'),
  runTestComplianceReminders: op('Test helpers', POST),
} satisfies Record<string, OperationSpec>;

/** The operationId of one integrator API operation. */
export type OperationId = keyof typeof OPERATIONS;

/**
 * The identity part of a route schema: `{operationId, tags: [tag]}` from OPERATIONS. Spread it into `schema`.
 */
export function operation(id: OperationId): { operationId: OperationId; tags: [ApiTag] } {
  return { operationId: id, tags: [OPERATIONS[id].tag] };
}

const STATUS_DESCRIPTIONS: Record<number, string> = {
  400: 'The request is invalid; `errors` names every bad field when the problem is in fields.',
  401: "Missing, unknown or revoked API key, or a key used at the other environment's base address.",
  402: 'The prepaid balance cannot cover the request; nothing was written.',
  403: 'Understood but not allowed (e.g. the user is not an admin of the company).',
  404: "No such resource in this environment of your organization (other organizations' and environments' ids answer 404 too).",
  409: 'The request conflicts with the current state of a resource, or with a request still running.',
  413: 'The request body is too large.',
  415: 'The request body is not JSON.',
  422: 'The Idempotency-Key was already used with a different request.',
  429:
    'Too many requests for this API key in the current window (or too many at once of this kind); wait the seconds of the ' +
    'Retry-After header. Every answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset.',
  500: 'Internal error; the body never carries internal details. Quote the requestId to support.',
  503: 'The service is briefly unavailable; retry later.',
};

// Ids of the example bodies (shaped like real ones: prefix, then a lower-case ULID).
const noSuch = (what: string, id: string) => ({ not_found: `No such ${what}: '${id}'` });
const ENDPOINT = 'we_01j8zq4v9r6w3t2y1x0a5b7c8g';
const ORDER = 'order_01j8zq4v9r6w3t2y1x0a5b7c8f';

/** What each code means and a message it can carry, for the documented example bodies. */
const CODE_EXAMPLES: Record<ErrorCode, { summary: string; message: string; extra?: Record<string, unknown> }> = {
  validation_error: {
    summary: 'A field failed validation',
    message: 'Invalid request: email: must be a valid email address',
    extra: { errors: [{ field: 'email', message: 'must be a valid email address' }] },
  },
  bad_request: { summary: 'The body is not valid JSON', message: 'The request body is not valid JSON' },
  price_below_floor: {
    summary: 'A retail price below the wholesale floor',
    message: 'retailAmount 40 is below the wholesale price of formation_tier_1 (49 dollars)',
    extra: { minimumAmount: 49 },
  },
  unauthorized: { summary: 'No valid API key', message: 'Missing API key: send it in the x-api-key header' },
  wrong_environment: {
    summary: 'A key of the other environment',
    message: 'This is a test API key; test requests go to the test base address',
  },
  insufficient_balance: {
    summary: 'The balance cannot cover the order',
    message: 'Insufficient balance: this order costs 349.00 dollars and the balance is 100.00 dollars',
  },
  forbidden: {
    summary: 'The user is not an admin of the company',
    message: "User 'user_01j8zq4v9r6w3t2y1x0a5b7c8d' is not an admin of company 'comp_01j8zq4v9r6w3t2y1x0a5b7c8e'",
  },
  not_found: { summary: 'No such resource', message: "No such company: 'comp_01j8zq4v9r6w3t2y1x0a5b7c8e'" },
  conflict: {
    summary: 'Conflicts with the current state',
    message: 'The request conflicts with the current state of the resource',
  },
  ein_already_requested: {
    summary: 'The company has or has requested an EIN',
    message: 'The company already has an EIN or a pending EIN order',
  },
  qualification_already_paid: {
    summary: 'Already qualified in the state',
    message: 'The company already has a paid foreign qualification in NY',
  },
  invalid_transition: {
    summary: 'Not an allowed status change',
    message: `Order ${ORDER} is filed, a terminal status; it cannot move to pending`,
  },
  idempotency_key_in_use: {
    summary: 'The first request with this key is still running',
    message: "A request with Idempotency-Key 'order-0001' is still being processed; retry after it completes",
  },
  idempotency_key_reused: {
    summary: 'The key was used with another request',
    message:
      "Idempotency-Key 'order-0001' was already used with a different request (another body or endpoint) in the last 24 hours; use a new key for a new request",
  },
  unsupported_media_type: {
    summary: 'The body is not JSON',
    message: 'Request bodies must be JSON: send Content-Type: application/json',
  },
  payload_too_large: { summary: 'The body is too large', message: 'The request body is too large' },
  rate_limited: {
    summary: 'Over the rate limit',
    message: 'Rate limit exceeded: 1200 requests per 60 seconds for this API key; retry in 12 seconds',
  },
  domain_not_verified: {
    summary: 'The DNS record proving the domain is not there (yet)',
    message:
      'No TXT record _fcs-domain-verification.portal.example.com with the value fcs-domain-verification=… was found; DNS changes can take a while',
  },
  webhook_endpoint_limit_reached: {
    summary: 'The environment has as many webhook endpoints as allowed',
    message:
      'This environment already has 20 webhook endpoints, the most allowed; delete one (DELETE /webhook-endpoints/{id}) before creating another',
  },
  internal_error: {
    summary: 'Internal error',
    message: 'An internal error occurred; it has been logged. Quote the requestId when contacting support.',
  },
  service_unavailable: { summary: 'Briefly unavailable', message: 'The service is briefly unavailable; retry later' },
};

/** Per-operation wording where the generic example would mislead (e.g. which resource a 404 or a 409 is about). */
const OPERATION_EXAMPLES: Partial<Record<OperationId, Partial<Record<ErrorCode, string>>>> = {
  createUser: { conflict: "A user with email 'ada@example.com' already exists; look it up with GET /users/{email}" },
  getUser: noSuch('user', 'ada@example.com'),
  createCompany: { not_found: "userId: no user 'user_01j8zq4v9r6w3t2y1x0a5b7c8d' exists in this environment" },
  createOrder: { not_found: "companyId: no company 'comp_01j8zq4v9r6w3t2y1x0a5b7c8e' exists in this environment" },
  quoteOrder: { not_found: "companyId: no company 'comp_01j8zq4v9r6w3t2y1x0a5b7c8e' exists in this environment" },
  updateOrganization: {
    conflict: "whiteLabelDomain 'portal.example.com' is already used by another organization",
    forbidden:
      'Organization settings reach live customers, so they change only with a live key: send this request to http://localhost:3000/v1/organization',
  },
  verifyWhiteLabelDomain: {
    conflict: 'No white-label domain is requested; set whiteLabelDomain with PATCH /organization first',
    forbidden:
      'Organization settings reach live customers, so they change only with a live key: send this request to http://localhost:3000/v1/organization/white-label-domain/verify',
  },
  updatePrice: noSuch('product type', 'formation_tier_9'),
  deletePrice: { not_found: 'No custom price is set for ein' },
  listBalanceTransactions: noSuch('balance transaction', 'txn_01j8zq4v9r6w3t2y1x0a5b7c8j'),
  updateAutoRecharge: {
    validation_error: 'Invalid request: amount: must be between $10.00 and $50,000.00, got 5',
    forbidden:
      'Auto-recharge refills the live balance: change it with a live key (or in the portal while it shows Live).',
  },
  setUpAutoRechargeMethod: {
    conflict:
      'Auto-recharge is not available on this service yet: it charges cards and bank accounts through Stripe, which is not configured. Ask the operator.',
    forbidden:
      'Auto-recharge refills the live balance and is never charged in test: save a payment method with a live key.',
    service_unavailable:
      'The page to save a payment method could not be opened; nothing was saved. Retry in a few minutes.',
  },
  createTopUp: {
    validation_error: 'Invalid request: amount: must be between $10.00 and $50,000.00, got 5',
    conflict:
      'Top-ups are not available on this service yet: it takes card and bank payments through Stripe, which is not configured. Ask the operator, or use the test environment.',
    service_unavailable: 'The payment page could not be opened; nothing was charged. Retry in a few minutes.',
  },
  listTopUps: noSuch('top-up', 'topup_01j8zq4v9r6w3t2y1x0a5b7c8n'),
  getTopUp: noSuch('top-up', 'topup_01j8zq4v9r6w3t2y1x0a5b7c8n'),
  getBalanceStatement: {
    // A month that is no single path segment (empty, or one the URL's dots and slashes resolve away) names no route.
    not_found: 'No route for GET /v1/balance/statements/',
    validation_error: "Invalid request: month: must not be after the current month (2026-03, UTC), got '2026-04'",
  },
  getDocument: noSuch('document', 'doc_01j8zq4v9r6w3t2y1x0a5b7c8k'),
  getEvent: noSuch('event', 'evt_01j8zq4v9r6w3t2y1x0a5b7c8h'),
  getWebhookEndpoint: noSuch('webhook endpoint', ENDPOINT),
  updateWebhookEndpoint: noSuch('webhook endpoint', ENDPOINT),
  deleteWebhookEndpoint: noSuch('webhook endpoint', ENDPOINT),
  rotateWebhookEndpointSecret: noSuch('webhook endpoint', ENDPOINT),
  sendTestWebhookEvent: {
    ...noSuch('webhook endpoint', ENDPOINT),
    rate_limited: 'Too many test events for this environment: at most 10 per minute; retry in 42 seconds (Retry-After)',
    conflict: `Webhook endpoint ${ENDPOINT} is disabled; enable it with PATCH {"disabled": false} before testing it`,
  },
  getWebhookDelivery: noSuch('webhook delivery', 'wd_01j8zq4v9r6w3t2y1x0a5b7c8m'),
  resendWebhookDelivery: {
    ...noSuch('webhook delivery', 'wd_01j8zq4v9r6w3t2y1x0a5b7c8m'),
    rate_limited: 'Too many resends for this environment: at most 60 per minute; retry in 42 seconds (Retry-After)',
    conflict: `Webhook endpoint ${ENDPOINT} is disabled; enable it with PATCH {"disabled": false} first`,
  },
  createMagicLink: noSuch('user', 'user_01j8zq4v9r6w3t2y1x0a5b7c8d'),
  advanceTestOrder: noSuch('order', ORDER),
  correctEinResponsibleParty: {
    ...noSuch('order', ORDER),
    invalid_transition: `EIN order ${ORDER} is pending, not in exception: its responsible party can be corrected only while the IRS refused it (exception 483 or 484)`,
  },
  createTestDocument: noSuch('order', ORDER),
  getComplianceCalendar: {
    ...noSuch('company', 'comp_01j8zq4v9r6w3t2y1x0a5b7c8e'),
    conflict:
      'Company comp_01j8zq4v9r6w3t2y1x0a5b7c8e has no formationDate: its compliance calendar is computed from it; set it with PATCH /companies/comp_01j8zq4v9r6w3t2y1x0a5b7c8e',
  },
  streamEvents: {
    rate_limited: 'Too many event streams are open with this API key (at most 5); close one or retry later',
    not_found: "No such event: 'evt_01j8zq4v9r6w3t2y1x0a5b7c8h' (Last-Event-ID)",
  },
};

const EXAMPLE_REQUEST_ID = 'req_5f0c6d2a9b8e4c1d8a7f6e5d4c3b2a10';

/**
 * The error responses of one operation for its route schema: one entry per HTTP status its codes map to, each the
 * shared Error body (`$ref` Error) with a description naming the codes and one example body per code. Fastify
 * serializes error bodies with the same schema, and @fastify/swagger publishes it as is.
 */
export function operationErrors(id: OperationId): Record<number, TSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of OPERATIONS[id].errors)
    byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  const out: Record<number, TSchema> = {};
  for (const status of [...byStatus.keys()].sort()) {
    const codes = byStatus.get(status)!;
    const examples = Object.fromEntries(
      codes.map((code) => {
        // An operation without a body is malformed by its URL, not by JSON.
        const { summary, message, extra } =
          code === 'bad_request' && !OPERATIONS[id].errors.includes('payload_too_large')
            ? MALFORMED_URL_EXAMPLE
            : CODE_EXAMPLES[code];
        return [
          code,
          {
            summary,
            value: {
              message: OPERATION_EXAMPLES[id]?.[code] ?? message,
              code,
              requestId: EXAMPLE_REQUEST_ID,
              ...extra,
            },
          },
        ];
      }),
    );
    out[status] = Type.Unsafe({
      description: `${STATUS_DESCRIPTIONS[status]} Codes: ${codes.map((c) => `\`${c}\``).join(', ')}.`,
      content: { 'application/json': { schema: Type.Ref('Error'), examples } },
    });
  }
  return out;
}
