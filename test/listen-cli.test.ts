import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { constructEvent } from '../sdk/src/index.js';
import { withTransaction } from '../src/lib/db.js';
import { emitEvent } from '../src/modules/events/events.service.js';
import { ok } from './e2e-fixtures.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';
import { formationBody } from './orders-fixtures.js';
import { listening } from './sdk-helpers.js';
import { startReceiver, verifyWithStripe, waitFor, type Receiver } from './webhook-receiver.js';

/*
 * `filing-compliance listen` as a real child process (the SDK's command line from source, through tsx) against the
 * service listening on a port: it prints a whsec_ secret, forwards each event to a local receiver signed with it,
 * prints one line per event with the receiver's status, and loses no event across a dropped connection.
 */

let t: TestApp;
let origin: string;
let receiver: Receiver;
const children: ChildProcessWithoutNullStreams[] = [];
beforeAll(async () => {
  t = await createTestApp();
  origin = await listening(t);
  receiver = await startReceiver();
});
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

/** The CLI running `args` with `apiKey` in FILING_COMPLIANCE_API_KEY (none: unset), with its output lines as they come. */
function cli(args: string[], apiKey = '') {
  const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('sdk/src/main.ts'), ...args], {
    env: { ...process.env, FILING_COMPLIANCE_API_KEY: apiKey },
  });
  children.push(child);
  const lines: string[] = [];
  let errors = '';
  let buffer = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split('\n');
    buffer = parts.pop()!;
    lines.push(...parts);
  });
  child.stderr.on('data', (chunk: Buffer) => {
    errors += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    lines,
    stderr: () => errors,
    exited,
    waitForLine: (what: string, test: (line: string) => boolean, timeoutMs = 20_000) =>
      waitFor(`${what} in the CLI output (so far: ${lines.join(' | ')} ${errors})`, () => lines.find(test), timeoutMs),
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

const eventLines = (lines: string[]) => lines.filter((l) => l.includes(' --> '));

describe('filing-compliance listen', () => {
  it('forwards signed events to the local URL with one line each, and loses none across a reconnect', async () => {
    const tenant = await t.newTenant('Laptop Platform');
    await ok(await tenant.api('POST', '/test_helpers/balance-credits', { amount: 2000 }), 201);
    const user = await ok(
      await tenant.api('POST', '/users', { fullName: 'Grace Hopper', email: 'grace.listen@example.com' }),
      201,
    );
    const run = cli(
      [
        'listen',
        '--forward-to',
        receiver.url,
        '--base-url',
        `${origin}/test/v1`,
        '--events',
        'filing.status_changed,document.uploaded',
      ],
      tenant.keys.test,
    );
    const secretLine = await run.waitForLine('the signing secret', (l) => /whsec_/.test(l));
    const secret = /(whsec_[A-Za-z0-9_-]+)/.exec(secretLine!)![1];
    await run.waitForLine('the connection', (l) => l.includes('Connected to'));

    const placed = await ok(await tenant.api('POST', '/orders', formationBody(user.id, 'DE')), 201);
    const orderId = placed.items[0].orderId as string;
    const advance = (body: Record<string, unknown>) =>
      tenant.api('POST', `/test_helpers/orders/${orderId}/advance`, body).then((r) => ok(r, 200));
    await advance({ filingStatus: 'pending' });
    await waitFor('two forwarded events', () => receiver.requests.length >= 2);

    // The service goes away (every connection dropped, nothing listening) while three more events are committed.
    const port = (t.app.server.address() as AddressInfo).port;
    t.app.server.closeAllConnections();
    await new Promise<void>((resolve) => t.app.server.close(() => resolve()));
    await run.waitForLine('the disconnection', (l) => l.includes('Disconnected'));
    await advance({ filingStatus: 'exception', exceptionCode: '465', exceptionMessage: 'Name taken' });
    await advance({ filingStatus: 'filed', filingDate: '2025-03-14' });
    await ok(
      await tenant.api('POST', `/test_helpers/orders/${orderId}/documents`, {
        documentType: 'articles_of_organization',
      }),
      201,
    );
    await new Promise<void>((resolve) => t.app.server.listen(port, '127.0.0.1', () => resolve()));

    await run.waitForLine('the resumed connection', (l) => /Connected to .*resuming after evt_/.test(l), 40_000);
    await waitFor('five forwarded events', () => receiver.requests.length >= 5, 40_000);
    const stored = (await tenant.api('GET', '/events?limit=100'))
      .json()
      .data.map((e: { id: string }) => e.id)
      .reverse();
    expect(receiver.requests.map((r) => r.event.id)).toEqual(stored);
    expect(
      receiver.requests.map((r) => (r.event.type === 'document.uploaded' ? 'document' : r.event.data.filingStatus)),
    ).toEqual(['submitted', 'pending', 'exception', 'filed', 'document']);
    for (const request of receiver.requests) {
      expect(constructEvent(request.rawBody, request.headers['service-signature'], secret).id).toBe(request.event.id);
      verifyWithStripe(request, secret);
      expect(request.headers['service-event-id']).toBe(request.event.id);
      expect(request.rawBody).toBe(JSON.stringify((await tenant.api('GET', `/events/${request.event.id}`)).json()));
    }
    await waitFor('a line for every forwarded event', () => eventLines(run.lines).length >= 5);
    const lines = eventLines(run.lines);
    expect(lines).toHaveLength(5);
    for (const [i, line] of lines.entries()) {
      expect(line).toMatch(
        new RegExp(
          `--> ${receiver.requests[i].event.type} \\[${receiver.requests[i].event.id}\\]  <-- \\[200\\] POST ${receiver.url}$`,
        ),
      );
    }
    expect(await run.stop()).toBe(0);
  }, 120_000);

  it('loses nothing when the service goes away before the first event, and forwards compliance events (EVT-8)', async () => {
    const tenant = await t.newTenant('Quiet Laptop');
    await ok(await tenant.api('POST', '/test_helpers/balance-credits', { amount: 2000 }), 201);
    const user = await ok(
      await tenant.api('POST', '/users', { fullName: 'Quiet Grace', email: 'grace.quiet@example.com' }),
      201,
    );
    const local = await startReceiver();
    try {
      const run = cli(
        [
          'listen',
          '--forward-to',
          local.url,
          '--base-url',
          `${origin}/test/v1`,
          '--events',
          'compliance.deadline_approaching,compliance.deadline_missed,filing.status_changed',
        ],
        tenant.keys.test,
      );
      await run.waitForLine('the connection', (l) => l.includes('Connected to'));
      // Let the stream's start position arrive, then take the service away before any event was forwarded.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const port = (t.app.server.address() as AddressInfo).port;
      t.app.server.closeAllConnections();
      await new Promise<void>((resolve) => t.app.server.close(() => resolve()));
      await run.waitForLine('the disconnection', (l) => l.includes('Disconnected'));
      const placed = await ok(await tenant.api('POST', '/orders', formationBody(user.id, 'DE')), 201);
      const reminder = await withTransaction(t.ctx.pool, (tx) =>
        emitEvent(
          tx,
          { organizationId: tenant.organizationId, environment: 'test' },
          'compliance.deadline_approaching',
          {
            companyId: placed.companyId,
            jurisdiction: 'DE',
            kind: 'annual_report',
            dueDate: '2026-03-01',
            daysUntilDue: 30,
            reportName: 'Annual Franchise Tax Report',
            orderable: true,
          },
        ),
      );
      await new Promise<void>((resolve) => t.app.server.listen(port, '127.0.0.1', () => resolve()));

      await run.waitForLine(
        'the resumed connection',
        (l) => /Connected to .*resuming from where the first connection started \(pos_\d+\)/.test(l),
        40_000,
      );
      const stored = (await tenant.api('GET', '/events?limit=100'))
        .json()
        .data.map((e: { id: string }) => e.id)
        .reverse();
      expect(stored).toContain(reminder.id);
      await waitFor(
        'every event committed while the service was away',
        () => local.requests.length >= stored.length,
        40_000,
      );
      expect(local.requests.map((r) => r.event.id)).toEqual(stored);
      // The CLI prints an event's line once the local answer is back, a moment after the receiver got the request.
      await waitFor('a line for every forwarded event', () => eventLines(run.lines).length >= stored.length);
      expect(eventLines(run.lines).map((l) => / --> (\S+) /.exec(l)![1])).toEqual(
        local.requests.map((r) => r.event.type),
      );
      expect(eventLines(run.lines).find((l) => l.includes(reminder.id))).toMatch(
        /--> compliance\.deadline_approaching \[evt_\w+\] {2}<-- \[200\]/,
      );
      expect(await run.stop()).toBe(0);
    } finally {
      await local.close();
    }
  }, 120_000);

  it('is the `filing-compliance` executable of the workspace (npx), runnable right after npm ci', async () => {
    const { stdout } = await promisify(execFile)(path.resolve('node_modules/.bin/filing-compliance'), [
      'listen',
      '--help',
    ]);
    expect(stdout).toMatch(/Usage: filing-compliance listen/);
    for (const type of [
      'filing.status_changed',
      'document.uploaded',
      'compliance.deadline_approaching',
      'compliance.deadline_missed',
    ])
      expect(stdout).toContain(type);
  }, 60_000);

  it("works with a live key against the live address, and shows the receiver's failures", async () => {
    const tenant: TestTenant = await t.newTenant('Live Platform');
    const failing = await startReceiver(() => ({ status: 500, body: 'boom' }));
    try {
      const run = cli(['listen', '--forward-to', failing.url, '--base-url', `${origin}/v1`], tenant.keys.live);
      await run.waitForLine('the connection', (l) => l.includes('Connected to') && l.includes('/v1/events/stream'));
      const endpoint = await ok(
        await tenant.api(
          'POST',
          '/webhook-endpoints',
          { url: 'https://hooks.example.com/x', eventTypes: ['filing.status_changed'] },
          { env: 'live' },
        ),
        201,
      );
      await ok(await tenant.api('POST', `/webhook-endpoints/${endpoint.id}/test`, undefined, { env: 'live' }), 202);
      const line = await run.waitForLine('the forwarded test event', (l) => l.includes(' --> webhook.test'));
      expect(line).toContain('<-- [500]');
      expect(run.lines.join('\n')).toMatch(/Forwarding live events/);
      expect(await run.stop()).toBe(0);
    } finally {
      await failing.close();
    }
  }, 60_000);

  it('refuses bad arguments with a message and exit status 1', async () => {
    const noUrl = cli(['listen'], 'sk_test_abc');
    expect(await noUrl.exited).not.toBe(0);
    expect(noUrl.stderr()).toMatch(/--forward-to/);
    const badEvents = cli(
      ['listen', '--forward-to', 'http://localhost:4000/x', '--events', 'order.placed'],
      'sk_test_abc',
    );
    expect(await badEvents.exited).not.toBe(0);
    expect(badEvents.stderr()).toMatch(/event types/);
    const badKey = cli(
      ['listen', '--forward-to', 'http://localhost:4000/x', '--base-url', `${origin}/test/v1`],
      'sk_test_0123456789abcdefghijklmnopqrstuvwxyz',
    );
    expect(await badKey.exited).toBe(1);
    expect(badKey.stderr()).toMatch(/Invalid API key/);
  }, 60_000);

  it('refuses a key given on the command line, saying how to give it instead, without repeating it or connecting', async () => {
    const tenant = await t.newTenant('Key In Argv');
    for (const given of [['--api-key', tenant.keys.test], [`--api-key=${tenant.keys.test}`]]) {
      const run = cli(['listen', ...given, '--forward-to', receiver.url, '--base-url', `${origin}/test/v1`]);
      expect(await run.exited).toBe(1);
      expect(run.stderr()).toMatch(/--api-key is refused: .*visible to other users \(ps\).*shell history/);
      expect(run.stderr()).toContain('set FILING_COMPLIANCE_API_KEY in the environment');
      expect(run.stderr()).toContain('type the key at its prompt');
      expect(run.stderr() + run.lines.join('\n')).not.toContain(tenant.keys.test);
      expect(run.lines.join('\n')).not.toMatch(/Connected|whsec_/);
    }
  }, 60_000);

  it('without FILING_COMPLIANCE_API_KEY and without a terminal to ask on, says how to give the key', async () => {
    const run = cli(['listen', '--forward-to', receiver.url, '--base-url', `${origin}/test/v1`]);
    expect(await run.exited).toBe(1);
    expect(run.stderr()).toMatch(/^Error: No API key: set FILING_COMPLIANCE_API_KEY in the environment/);
  }, 60_000);

  it('on a terminal without FILING_COMPLIANCE_API_KEY, asks for the key and reads it without showing it', async () => {
    const tenant = await t.newTenant('Typed Key');
    const command = [
      process.execPath,
      '--import',
      'tsx',
      path.resolve('sdk/src/main.ts'),
      'listen',
      '--forward-to',
      receiver.url,
      '--base-url',
      `${origin}/test/v1`,
    ]
      .map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`)
      .join(' ');
    // util-linux `script` runs the command on a pseudo-terminal fed from its stdin: what the terminal shows, echo
    // included, comes out on its stdout.
    const terminal = spawn('script', ['-qfec', command, '/dev/null'], {
      env: { ...process.env, FILING_COMPLIANCE_API_KEY: '' },
    });
    children.push(terminal as ChildProcessWithoutNullStreams);
    let shown = '';
    terminal.stdout.on('data', (chunk: Buffer) => {
      shown += chunk.toString();
    });
    try {
      await waitFor(`the prompt (shown so far: ${shown})`, () => shown.includes('API key ('), 30_000);
      terminal.stdin.write(`${tenant.keys.test}\r`);
      await waitFor(`the connection (shown so far: ${shown})`, () => shown.includes('Connected to'), 30_000);
      expect(shown).toContain('not shown');
      expect(shown).not.toContain(tenant.keys.test);
      expect(shown).not.toContain(tenant.keys.test.slice(8, 20));
    } finally {
      terminal.kill('SIGKILL');
    }
  }, 60_000);
});
