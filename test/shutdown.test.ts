import http from 'node:http';
import net from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, OPERATOR_TOKEN, type TestApp, type TestTenant } from './harness.js';
import { exitOf, listeningPort, spawnCommand, spawnService, type ServiceProcess } from './service-process.js';
import { waitFor } from './webhook-receiver.js';

// SIGTERM/SIGINT: no new work, in-flight requests answered, database closed last, a clean stop logs no error.
let t: TestApp;
let tenant: TestTenant;
const started: ServiceProcess[] = [];
beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.newTenant();
});
afterAll(async () => {
  for (const s of started) s.kill();
  await t?.close();
});

function start(entry: string, env: Record<string, string> = {}): ServiceProcess {
  const service = spawnService(entry, {
    DATABASE_URL: t.ctx.config.databaseUrl!,
    OPERATOR_TOKEN,
    FILE_URL_SECRET: 'test-file-url-secret-0123456789',
    PORT: '0',
    LOG_LEVEL: 'info',
    ...env,
  });
  started.push(service);
  return service;
}

/** A POST whose body is sent in two halves: the request is in flight on the server until `finish()`. */
function slowRequest(port: number, path: string, body: string, headers: Record<string, string>) {
  let finish: () => void = () => {};
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += String(c)));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      },
    );
    req.on('error', reject);
    req.write(body.slice(0, 10));
    finish = () => void req.end(body.slice(10));
  });
  return { response, finish: () => finish() };
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

// The listening socket closes a moment after the "shutting down" line is written (the close runs through Fastify's
// hooks), so refusal is awaited for up to 2 s; a server that keeps accepting fails.
async function refusesWithin(port: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (!(await connects(port))) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const errorLines = (s: ServiceProcess) => s.logs().filter((l) => l.level >= 50);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('graceful shutdown', () => {
  it('answers a request in flight at SIGTERM, refuses new connections, exits 0 and logs no error', async () => {
    const server = start('src/server.ts');
    const port = await listeningPort(server);
    const user = { fullName: 'Ada Lovelace', email: 'ada@example.com', phoneNumber: '+14155550123' };
    const inFlight = slowRequest(port, '/test/v1/users', JSON.stringify(user), { 'x-api-key': tenant.keys.test });
    inFlight.response.catch(() => undefined);
    await server.waitForLog(/^incoming request$/);
    server.child.kill('SIGTERM');
    await server.waitForLog(/^shutting down/);
    expect(await refusesWithin(port, 2000)).toBe(true);
    inFlight.finish();
    const answer = await inFlight.response;
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.body)).toMatchObject({ id: expect.stringMatching(/^user_/), email: 'ada@example.com' });
    expect(await exitOf(server)).toEqual({ code: 0, signal: null });
    expect(errorLines(server)).toEqual([]);
    expect(server.logs().at(-1)).toMatchObject({ msg: 'stopped', forced: false });
    // The request really committed before the database closed.
    const { rows } = await t.ctx.pool.query(`SELECT 1 FROM users WHERE id = $1`, [JSON.parse(answer.body).id]);
    expect(rows).toHaveLength(1);
  });

  it('cuts what is still running after SHUTDOWN_TIMEOUT_MS and exits 1 with a warning, not an error', async () => {
    const server = start('src/server.ts', { SHUTDOWN_TIMEOUT_MS: '1500' });
    const port = await listeningPort(server);
    const stuck = slowRequest(port, '/test/v1/users', JSON.stringify({ fullName: 'Never Finished' }), {
      'x-api-key': tenant.keys.test,
    });
    const outcome = stuck.response.then(
      () => 'answered',
      () => 'cut',
    );
    await server.waitForLog(/^incoming request$/);
    const signalledAt = Date.now();
    server.child.kill('SIGTERM');
    expect(await exitOf(server)).toEqual({ code: 1, signal: null });
    expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(1500);
    expect(await outcome).toBe('cut');
    expect(server.logs().find((l) => /shutdown timeout reached/.test(l.msg))).toMatchObject({
      level: 40,
      unfinished: ['http'],
    });
    expect(errorLines(server)).toEqual([]);
  });

  // Supervisors (a container's `npm run start:prod`, systemd, `kill <pid>`) signal npm's own process, not the server
  // beneath it: the scripts exec the server in npm's shell, so the signal reaches it and nothing is left running.
  it.each([
    ['npm start', ['start'], /^Server listening at /],
    ['npm run worker', ['run', 'worker'], /^worker started$/],
  ])(
    '%s stopped with SIGTERM to npm alone drains, exits 0 and leaves nothing running',
    async (_name, args, ready) => {
      const npm = spawnCommand('npm', args, {
        DATABASE_URL: t.ctx.config.databaseUrl!,
        OPERATOR_TOKEN,
        FILE_URL_SECRET: 'test-file-url-secret-0123456789',
        PORT: '0',
        LOG_LEVEL: 'info',
        npm_config_update_notifier: 'false',
      });
      started.push(npm);
      const pid = (await npm.waitForLog(ready, 120_000)).pid as number;
      try {
        expect(pid).not.toBe(npm.child.pid); // the server runs beneath npm, as under a supervisor
        npm.child.kill('SIGTERM');
        expect(await exitOf(npm)).toEqual({ code: 0, signal: null });
        expect(npm.logs().at(-1)).toMatchObject({ msg: 'stopped', forced: false, pid });
        expect(errorLines(npm)).toEqual([]);
        expect(alive(pid)).toBe(false);
      } finally {
        if (alive(pid)) process.kill(pid, 'SIGKILL'); // left behind by a failure: never outlive the test
      }
    },
    180_000,
  );

  it('lets a running job and a webhook attempt in flight at SIGTERM finish and records both before the database closes', async () => {
    // Both the email server and the webhook receiver take 2 s to answer: SIGTERM arrives while each is waiting.
    const HOLD_MS = 2000;
    const inProgress = { email: false, webhook: false };
    const emailed: string[] = [];
    const smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      onData(stream, session, callback) {
        inProgress.email = true;
        stream.resume();
        stream.on('end', () =>
          setTimeout(() => {
            emailed.push(session.envelope.rcptTo.map((r) => r.address).join());
            callback();
          }, HOLD_MS),
        );
      },
    });
    const receiver = http.createServer((req, res) => {
      inProgress.webhook = true;
      req.resume();
      setTimeout(() => res.writeHead(200).end('ok'), HOLD_MS);
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const other = await t.newTenant('Shutdown Jobs Co');
      await t.ctx.pool.query(`UPDATE organizations SET contact_email = 'ops@shutdown.example' WHERE id = $1`, [
        other.organizationId,
      ]);
      const url = `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}/hooks`;
      const disabled = (
        await other.api('POST', '/webhook-endpoints', { url, eventTypes: ['document.uploaded'] })
      ).json();
      await t.ctx.pool.query(
        `UPDATE webhook_endpoints SET disabled = true, disabled_reason = 'answered 410 Gone' WHERE id = $1`,
        [disabled.id],
      );
      await t.ctx.pool.query(
        `SELECT graphile_worker.add_job('send_endpoint_disabled_email', json_build_object('endpointId', $1::text, 'reason', 'answered 410 Gone'))`,
        [disabled.id],
      );
      const live = (await other.api('POST', '/webhook-endpoints', { url, eventTypes: ['document.uploaded'] })).json();
      expect((await other.api('POST', `/webhook-endpoints/${live.id}/test`, {})).statusCode).toBeLessThan(300);

      const worker = start('src/worker-main.ts', {
        SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as net.AddressInfo).port}`,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      });
      await worker.waitForLog(/^worker started$/, 60_000);
      await waitFor(
        'the worker to hold both the email and the webhook job in progress',
        () => inProgress.email && inProgress.webhook,
        30_000,
      );
      expect(inProgress).toEqual({ email: true, webhook: true });
      expect(emailed).toEqual([]);
      worker.child.kill('SIGTERM');

      expect(await exitOf(worker)).toEqual({ code: 0, signal: null });
      expect(worker.logs().at(-1)).toMatchObject({ msg: 'stopped', forced: false });
      expect(errorLines(worker)).toEqual([]);
      expect(emailed).toEqual(['ops@shutdown.example']);
      // The job was recorded as done (graphile-worker deletes finished jobs), the attempt as a success.
      const { rows: jobs } = await t.ctx.pool.query(
        `SELECT 1 FROM graphile_worker.jobs WHERE task_identifier = 'send_endpoint_disabled_email'`,
      );
      expect(jobs).toEqual([]);
      const { rows: deliveries } = await t.ctx.pool.query(
        `SELECT status, attempt_count FROM webhook_deliveries WHERE endpoint_id = $1`,
        [live.id],
      );
      expect(deliveries).toEqual([{ status: 'succeeded', attempt_count: 1 }]);
    } finally {
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
    }
  }, 120_000);

  it('stops the worker alone on SIGINT with exit code 0 and no error', async () => {
    const worker = start('src/worker-main.ts');
    await worker.waitForLog(/^worker started$/);
    worker.child.kill('SIGINT');
    expect(await exitOf(worker)).toEqual({ code: 0, signal: null });
    expect(errorLines(worker)).toEqual([]);
    expect(worker.logs().at(-1)).toMatchObject({ msg: 'stopped', forced: false });
  });
});
