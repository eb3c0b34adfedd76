/**
 * The attacker of the `signin` bench section, in its own process so that its sockets and timers never delay
 * the load generator's measurements: SIGNIN_CONCURRENCY clients that each keep one console sign-in with a wrong
 * password in flight (the next as soon as the last is answered), each attempt for a different e-mail from a
 * different address, until SIGTERM. Prints `READY <target>` as the first attempts go out and
 * `ATTACK <json counts by status>` when stopped.
 */
export {};

const target = process.env.SIGNIN_TARGET!;
const concurrency = Number(process.env.SIGNIN_CONCURRENCY ?? 200);

// One login form: its token is an HMAC of the cookie's nonce, so the pair can be replayed for every attempt.
const form = await fetch(`${target}/console/login`);
const cookie = (form.headers.get('set-cookie') ?? '').split(';')[0]!;
const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1];
if (!cookie || !csrf) throw new Error('signin-attacker: no login form token');

const counts: Record<string, number> = {};
let n = 0;
let stopping = false;

async function attempt(): Promise<void> {
  n += 1;
  const body = new URLSearchParams({
    _csrf: csrf!,
    email: `attacker-${process.pid}-${n}@example.com`,
    password: 'wrong password guess',
    next: '/console/queue',
  });
  try {
    // A distributed attack: every attempt from another address (the server trusts X-Forwarded-For in this run).
    const from = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
    const res = await fetch(`${target}/console/login`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': from },
      body,
      redirect: 'manual',
    });
    await res.arrayBuffer();
    counts[res.status] = (counts[res.status] ?? 0) + 1;
  } catch {
    counts.error = (counts.error ?? 0) + 1;
  }
}

process.on('SIGTERM', () => {
  stopping = true;
});
process.stdout.write(`READY ${target}\n`);
// Each of the SIGNIN_CONCURRENCY clients sends its next attempt as soon as its last one is answered, so that many are
// always in flight.
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (!stopping) await attempt();
  }),
);
process.stdout.write(`ATTACK ${JSON.stringify(counts)}\n`);
process.exit(0);
