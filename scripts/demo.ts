/**
 * `npm run demo`: the whole main job on real input, in one process. Starts the service on
 * the embedded PostgreSQL (DATA_DIR, default .data/demo) on a free port, starts a local webhook receiver that
 * verifies signatures with Stripe's constructEvent, creates an organization, a user and a Delaware LLC with
 * two members, orders formation + EIN + registered agent in test mode, plays the filing team with the test
 * helpers (including a name exception), uploads the filed documents, prints every verified event as it
 * arrives and the resulting balance and balance transactions, then shuts everything down.
 */
import net from 'node:net';
import { buildApp } from '../src/app.js';
import { boot } from '../src/boot.js';
import { loadConfig } from '../src/config.js';
import { startWorker } from '../src/worker.js';
import { startDemoReceiver } from './demo-receiver.js';

const print = (line = '') => process.stdout.write(`${line}\n`);
const step = (title: string) => print(`\n== ${title}`);

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Calls the service over real HTTP; throws with the error body on any non-2xx answer. */
function client(baseUrl: string, headers: Record<string, string>) {
  return async <T = any>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
    return JSON.parse(text) as T;
  };
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const usd = (n: number) =>
  `${n < 0 ? '-' : ''}$${Math.abs(n).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

async function main(): Promise<number> {
  const port = Number(process.env.PORT ?? (await freePort()));
  const config = loadConfig({
    ...process.env,
    DATA_DIR: process.env.DATA_DIR ?? '.data/demo',
    // Not the default 54329, so the demo runs beside `npm start`.
    EMBEDDED_PG_PORT: process.env.EMBEDDED_PG_PORT ?? '54339',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    PORT: String(port),
    LIVE_BASE_URL: `http://127.0.0.1:${port}/v1`,
    TEST_BASE_URL: `http://127.0.0.1:${port}/test/v1`,
    // The receiver listens on 127.0.0.1: the demo must allow private-network webhook URLs.
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  });
  step('Starting the service');
  const booted = await boot(config);
  const { ctx } = booted;
  const app = await buildApp(ctx, { logger: false });
  await app.listen({ port, host: '127.0.0.1' });
  const worker = await startWorker(booted.workerCtx);
  const receiver = await startDemoReceiver(print);
  print(
    `  API (test):       ${config.testBaseUrl}   (${booted.embedded ? `embedded PostgreSQL in ${config.dataDir}` : 'DATABASE_URL'})`,
  );
  print(`  webhook receiver: ${receiver.url}   (verifies Service-Signature with stripe.webhooks.constructEvent)`);
  print('  WEBHOOK_ALLOW_PRIVATE_NETWORKS=true: the receiver is on a local address');

  try {
    await run(ctx.secrets.operatorToken, config.testBaseUrl, receiver);
  } finally {
    step('Shutting down');
    await worker.stop();
    await app.close();
    await receiver.close();
    await booted.close();
    print('  worker, server, receiver and database stopped');
  }
  if (receiver.rejected) {
    print(`\n${receiver.rejected} webhook(s) failed verification`);
    return 1;
  }
  return 0;
}

async function run(
  operatorToken: string,
  testBaseUrl: string,
  receiver: Awaited<ReturnType<typeof startDemoReceiver>>,
): Promise<void> {
  const origin = new URL(testBaseUrl).origin;
  const admin = client(`${origin}/admin/v1`, { authorization: `Bearer ${operatorToken}` });
  step('Operator creates an integrator organization');
  const org = await admin('POST', '/organizations', { name: 'Northwind Business Platform' });
  print(`  ${org.id}  ${org.name}  test key ${org.apiKeys.test.slice(0, 12)}…`);
  const api = client(testBaseUrl, { 'x-api-key': org.apiKeys.test });

  // Every action commits its events and deliveries before answering; wait until none is pending.
  const settle = () =>
    until(
      'webhook deliveries',
      async () => (await api('GET', '/webhook-deliveries?status=pending&limit=1')).data.length === 0,
    );

  step('Integrator registers its webhook endpoint');
  const endpoint = await api('POST', '/webhook-endpoints', {
    url: receiver.url,
    eventTypes: ['filing.status_changed', 'document.uploaded'],
    description: 'Demo receiver',
  });
  receiver.secret = endpoint.secret;
  print(`  ${endpoint.id} -> ${endpoint.url}  secret ${endpoint.secret.slice(0, 10)}… (shown once)`);

  step('Integrator credits its test balance');
  const credit = await api('POST', '/test_helpers/balance-credits', { amount: 1500 });
  print(`  +${usd(credit.amount)}  balance ${usd(credit.balanceAfter)}`);

  step('Integrator creates the customer');
  const maya = await api('POST', '/users', {
    fullName: 'Maya Chen',
    email: 'maya.chen@blueheroncoffee.com',
    phoneNumber: '+13025550142',
  });
  print(`  ${maya.id}  ${maya.fullName} <${maya.email}>`);

  step('Integrator orders formation + EIN + registered agent (Delaware LLC, two members)');
  const placed = await api('POST', '/orders', orderBody(maya.id));
  print(`  company ${placed.companyId}  Blue Heron Coffee Roasters LLC`);
  for (const item of placed.items)
    print(`  ${item.orderId}  ${item.orderType.padEnd(17)} ${item.filingStatus.padEnd(10)} ${usd(item.amount)}`);
  await settle();

  const byType = Object.fromEntries(
    placed.items.map((i: { orderType: string; orderId: string }) => [i.orderType, i.orderId]),
  );
  const advance = async (type: string, body: Record<string, unknown>, note = '') => {
    step(`Filing team (test helper): ${type} -> ${body.filingStatus}${note}`);
    await api('POST', `/test_helpers/orders/${byType[type]}/advance`, body);
    await settle();
  };
  const upload = async (type: string, documentType: string) => {
    step(`Filing team (test helper): ${documentType} arrives for the ${type} order`);
    const doc = await api('POST', `/test_helpers/orders/${byType[type]}/documents`, { documentType });
    print(`  ${doc.documentId}  ${doc.fileName}`);
    await settle();
  };

  await advance('formation', { filingStatus: 'pending' }, ' (sent to the Delaware Division of Corporations)');
  await advance('formation', {
    filingStatus: 'exception',
    exceptionCode: '465',
    exceptionMessage:
      'A Delaware entity named "Blue Heron Coffee Roasters LLC" already exists; filing under the first alternative name',
  });
  await advance('formation', { filingStatus: 'pending' }, ' (exception resolved, filing resumes)');
  await advance('formation', { filingStatus: 'filed' });
  await upload('formation', 'articles_of_organization');
  await advance('registered_agent', { filingStatus: 'filed' }, ' (agent appointed)');
  await advance('ein', { filingStatus: 'pending' }, ' (application sent to the IRS)');
  await advance('ein', { filingStatus: 'filed' });
  await upload('ein', 'ein_confirmation');

  step('Result');
  const organization = await api('GET', '/organization');
  const txns = await api('GET', '/balance-transactions?limit=100');
  print(`  ${receiver.verified.length} webhooks received, all signatures verified`);
  print(`  test balance: ${usd(organization.balance)}`);
  print('  balance transactions (newest first):');
  for (const t of txns.data) {
    print(
      `    ${t.id}  ${t.type.padEnd(8)} ${usd(t.amount).padStart(11)}  after ${usd(t.balanceAfter).padStart(11)}  ${t.description}`,
    );
  }
}

function orderBody(userId: string) {
  const office = {
    line1: '1201 N Orange Street',
    line2: 'Suite 600',
    city: 'Wilmington',
    state: 'DE',
    postalCode: '19801',
    country: 'US',
  };
  return {
    userId,
    filingState: 'DE',
    formation: {
      company: {
        legalName: 'Blue Heron Coffee Roasters LLC',
        entityType: 'LLC',
        structureType: 'MEMBER',
        fiscalEndMonth: 'December',
        principalAddress: office,
        mailingAddress: office,
        officers: [
          {
            type: 'PERSON',
            firstName: 'Maya',
            lastName: 'Chen',
            title: 'Managing Member',
            isPrimary: true,
            address: {
              line1: '42 Brandywine Blvd',
              city: 'Wilmington',
              state: 'DE',
              postalCode: '19809',
              country: 'US',
            },
          },
          {
            type: 'PERSON',
            firstName: 'Daniel',
            lastName: 'Okafor',
            title: 'Member',
            address: {
              line1: '310 Market Street',
              city: 'Philadelphia',
              state: 'PA',
              postalCode: '19106',
              country: 'US',
            },
          },
        ],
      },
      alternativeNames: ['Blue Heron Roasting Company LLC', 'Blue Heron Coffee LLC'],
    },
    ein: {
      responsibleParty: {
        firstName: 'Maya',
        lastName: 'Chen',
        taxIdType: 'SSN',
        taxId: '123-45-6789',
        title: 'Managing Member',
      },
      reasonForApplying: 'started_new_business',
      principalActivity: 'accommodation_and_food_service',
      principalProductOrService: 'Specialty coffee roasting and retail coffee bar',
      employees: { agricultural: 0, household: 0, other: 4 },
      firstWagesDate: '2025-06-01',
      irsQuestions: {
        ownsHeavyHighwayVehicle: false,
        involvesGambling: false,
        filesExciseTaxForm720: false,
        sellsAlcoholTobaccoOrFirearms: false,
      },
    },
    registeredAgent: { isChangeOfAgent: false },
  };
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`\nDemo failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
