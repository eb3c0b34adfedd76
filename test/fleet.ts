import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { harborLightFormation } from './e2e-fixtures.js';
import { OPERATOR_TOKEN, TEST_DATA_ENCRYPTION_KEY } from './harness.js';
import { listeningPort, spawnService, type ServiceProcess } from './service-process.js';
import { verifyWithStripe, type ReceivedRequest } from './webhook-receiver.js';

/*
 * Helpers of the real-process scale-out and fault tests: API and worker processes started the way an operator
 * starts them (environment variables only), driven over HTTP, and a webhook receiver that checks what every
 * integrator relies on (signatures, every event at least once, one attempt of a delivery at a time).
 */

/** Settings shared by every process of a fleet: one database, the same secrets, no rate limit in the way. */
export function fleetEnv(databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    OPERATOR_TOKEN,
    FILE_URL_SECRET: 'test-file-url-secret-0123456789',
    DATA_ENCRYPTION_KEY: TEST_DATA_ENCRYPTION_KEY,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    ...Object.fromEntries(
      ['API_REQUESTS', 'ADMIN_REQUESTS', 'ADMIN_AUTH_FAILURES', 'AUTH_FAILURES', 'DASHBOARD_REQUESTS'].map((n) => [
        `RATE_LIMIT_${n}`,
        '1000000',
      ]),
    ),
    ...extra,
  };
}

/** How long a process may take to start (the 2-core test machine may be busy). */
const STARTUP_TIMEOUT_MS = 180_000;

/** An API process (`npm start` with START_WORKER=false) and the base URL it listens on. */
export interface ApiProcess {
  service: ServiceProcess;
  baseUrl: string;
}

/** Starts `src/server.ts` without its worker on a free port; resolves once it listens. */
export async function startApi(env: Record<string, string>, started: ServiceProcess[]): Promise<ApiProcess> {
  const service = spawnService('src/server.ts', { PORT: '0', START_WORKER: 'false', ...env, LOG_LEVEL: 'info' });
  started.push(service);
  await service.waitForLog(/^Server listening at /, STARTUP_TIMEOUT_MS);
  const port = await listeningPort(service);
  return { service, baseUrl: `http://127.0.0.1:${port}` };
}

/** Starts `src/worker-main.ts` (`npm run worker`); resolves once it logs "worker started". */
export async function startWorkerProcess(
  env: Record<string, string>,
  started: ServiceProcess[],
): Promise<ServiceProcess> {
  const service = spawnService('src/worker-main.ts', { ...env, LOG_LEVEL: 'info' });
  started.push(service);
  await service.waitForLog(/^worker started$/, STARTUP_TIMEOUT_MS);
  return service;
}

/** A JSON answer of the API. */
export interface ApiAnswer {
  status: number;
  body: any;
  /** Wall time from sending to the end of the answer, in ms. */
  ms: number;
}

/**
 * One HTTP call with a JSON body, failing after `timeoutMs` (the caller's bound on a hang). `headers` come on top
 * of content-type.
 */
export async function call(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  timeoutMs = 120_000,
): Promise<ApiAnswer> {
  const started = Date.now();
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON (metrics, plain text): keep the text
  }
  return { status: res.status, body: parsed, ms: Date.now() - started };
}

/** Like {@link call}, but fails naming the answer unless its status is `expected`. */
export async function expectCall(
  expected: number,
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<any> {
  const answer = await call(baseUrl, method, path, body, headers);
  if (answer.status !== expected)
    throw new Error(
      `${method} ${baseUrl}${path} answered ${answer.status}, expected ${expected}: ${JSON.stringify(answer.body)}`,
    );
  return answer.body;
}

/** A tenant made through the operator API, with a webhook endpoint on the receiver and test money. */
export interface FleetTenant {
  organizationId: string;
  testKey: string;
  endpointId: string;
  endpointPath: string;
  userId: string;
}

/**
 * Creates an organization (admin API), a webhook endpoint for `eventTypes` at `receiverUrl + /<org id>`, a user,
 * and credits `creditDollars` of test money, all through `baseUrl`. The endpoint's secret is registered with
 * `receiver` so every request to it is verified.
 */
export async function createTenant(
  baseUrl: string,
  receiver: FleetReceiver,
  name: string,
  creditDollars: number,
  eventTypes = ['filing.status_changed', 'document.uploaded'],
): Promise<FleetTenant> {
  const org = await expectCall(
    201,
    baseUrl,
    'POST',
    '/admin/v1/organizations',
    { name },
    { authorization: `Bearer ${OPERATOR_TOKEN}` },
  );
  const key = { 'x-api-key': org.apiKeys.test as string };
  const endpointPath = `/hooks/${org.id}`;
  const endpoint = await expectCall(
    201,
    baseUrl,
    'POST',
    '/test/v1/webhook-endpoints',
    { url: `${receiver.url}${endpointPath}`, eventTypes },
    key,
  );
  receiver.secrets.set(endpointPath, endpoint.secret);
  await expectCall(201, baseUrl, 'POST', '/test/v1/test_helpers/balance-credits', { amount: creditDollars }, key);
  const user = await expectCall(
    201,
    baseUrl,
    'POST',
    '/test/v1/users',
    { fullName: `${name} Owner`, email: `owner@${org.id.toLowerCase().replace(/_/g, '-')}.example.com` },
    key,
  );
  return { organizationId: org.id, testKey: org.apiKeys.test, endpointId: endpoint.id, endpointPath, userId: user.id };
}

/** A Delaware LLC formation for POST /orders (the walkthrough's), its fallback name made unique by `n`. */
export function formationBody(userId: string, n: number) {
  return harborLightFormation(userId, [`Fleet Test ${n} LLC`]);
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** What the receiver saw: every request, per event, and the most attempts of one delivery in flight at once. */
export interface FleetReceiver {
  /** `http://127.0.0.1:<port>`; endpoints add their own path. */
  url: string;
  /** Endpoint path -> signing secret; requests to a path without a secret, or with a bad signature, are counted as bad. */
  secrets: Map<string, string>;
  /** Requests received so far. */
  received: number;
  /** Distinct deliveries (endpoint path + event id) received, with how many times each arrived. */
  perDelivery: Map<string, number>;
  /** The highest number of requests of one delivery that were in flight at the same moment. */
  maxInFlightPerDelivery: number;
  /** The deliveries that were ever in flight twice at once. */
  overlapping: Set<string>;
  /** Requests whose signature did not verify (or had no known secret), with the reason. */
  badSignatures: string[];
  /**
   * How to answer a request: its status, after `delayMs` (the time the request stays in flight). Replaceable at
   * any time; answers 200 after 0-20 ms by default.
   */
  respond: (req: ReceivedRequest, delivery: string, arrival: number) => { status: number; delayMs: number };
  close(): Promise<void>;
}

/** Starts the checking receiver on 127.0.0.1 (port 0). */
export async function startFleetReceiver(): Promise<FleetReceiver> {
  const inFlight = new Map<string, number>();
  const receiver: FleetReceiver = {
    url: '',
    secrets: new Map(),
    received: 0,
    perDelivery: new Map(),
    maxInFlightPerDelivery: 0,
    overlapping: new Set(),
    badSignatures: [],
    respond: () => ({ status: 200, delayMs: Math.floor(Math.random() * 20) }),
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let event: ReceivedRequest['event'] = { id: '', type: '', createdAt: '', data: {} };
      try {
        event = JSON.parse(rawBody);
      } catch {
        receiver.badSignatures.push(`unparsable body at ${req.url}`);
      }
      const received: ReceivedRequest = { path: req.url ?? '/', headers: req.headers, rawBody, event };
      const secret = receiver.secrets.get(received.path);
      try {
        if (!secret) throw new Error('no endpoint registered at this path');
        verifyWithStripe(received, secret);
      } catch (err) {
        receiver.badSignatures.push(`${received.path} ${event.id}: ${(err as Error).message}`);
      }
      // One delivery = one event to one endpoint; Service-Event-Id must name the event of the body.
      if (req.headers['service-event-id'] !== event.id)
        receiver.badSignatures.push(
          `${received.path} ${event.id}: Service-Event-Id ${String(req.headers['service-event-id'])}`,
        );
      const delivery = `${received.path} ${event.id}`;
      receiver.received += 1;
      const arrival = (receiver.perDelivery.get(delivery) ?? 0) + 1;
      receiver.perDelivery.set(delivery, arrival);
      const now = (inFlight.get(delivery) ?? 0) + 1;
      inFlight.set(delivery, now);
      if (now > 1) receiver.overlapping.add(delivery);
      receiver.maxInFlightPerDelivery = Math.max(receiver.maxInFlightPerDelivery, now);
      // Counted out when the answer is sent or the sender gives up, whichever comes first.
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        const left = inFlight.get(delivery)! - 1;
        if (left) inFlight.set(delivery, left);
        else inFlight.delete(delivery);
      };
      res.on('close', finish);
      const answer = receiver.respond(received, delivery, arrival);
      setTimeout(() => {
        finish();
        res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.status < 300 ? 'ok' : 'try again');
      }, answer.delayMs);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

/** Runs `work` over `items` with at most `limit` in flight; the first failure rejects after the in-flight ones end. */
export async function inParallel<T>(
  items: T[],
  limit: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed: unknown = null;
  const lane = async () => {
    while (failed === null && next < items.length) {
      const i = next++;
      try {
        await work(items[i]!, i);
      } catch (err) {
        failed ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failed !== null) throw failed;
}

/** Polls `check` every `everyMs` until it returns a truthy value; fails after `timeoutMs` with `what` and `progress()`. */
export async function pollUntil<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs: number,
  progress: () => string = () => '',
  everyMs = 250,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline)
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${progress() ? ` (${progress()})` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
