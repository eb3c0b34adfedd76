import { type ChildProcess, spawn } from 'node:child_process';

/**
 * scrypt in a child process, so that the memory of password checks cannot touch the server's: each hash maps, fills
 * and unmaps 128 MiB, and in a thread of the server's own process those mappings hold the address-space lock that the
 * server's allocations and garbage collection also take, which stalled integrators' requests for tens of milliseconds
 * per hash (measured by the `signin` bench section). The child runs at the server's own CPU priority: at the lowest,
 * a machine busy with other work could starve a check past the sign-in's answer bound, and no operator could sign in
 * (AUTH-8); what hashing may take from the API is bounded by PasswordCheckQueue's CPU budget instead. Hashes run in
 * the child's thread pool, so the checks the queue allows at once overlap. The child's code is inline JavaScript, so it
 * runs the same under tsx and compiled; it exits when the server's process goes away.
 */
const CHILD_SOURCE = `
const { scrypt } = require('node:crypto');
process.on('disconnect', () => process.exit(0));
process.on('message', ({ id, password, salt, keyBytes, options }) => {
  try {
    scrypt(password, Buffer.from(salt, 'base64'), keyBytes, options, (err, key) => {
      if (err) process.send({ id, error: String(err.message || err) });
      else process.send({ id, key: key.toString('base64') });
    });
  } catch (err) {
    process.send({ id, error: String((err && err.message) || err) });
  }
});
`;

interface Pending {
  resolve: (key: Buffer) => void;
  reject: (err: Error) => void;
}

let child: ChildProcess | null = null;
let nextId = 0;
const pending = new Map<number, Pending>();

function started(): ChildProcess {
  if (child) return child;
  const c: ChildProcess = spawn(process.execPath, ['-e', CHILD_SOURCE], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    // Loaders or profilers the parent was started with have nothing to do in this child.
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  c.on('message', (m: { id: number; key?: string; error?: string }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (!pending.size) idle(c);
    if (!p) return;
    if (m.error || !m.key) p.reject(new Error(m.error ?? 'scrypt failed'));
    else p.resolve(Buffer.from(m.key, 'base64'));
  });
  c.on('error', (err) => fail(c, err));
  c.on('exit', () => fail(c, new Error('the scrypt process stopped')));
  idle(c);
  child = c;
  return c;
}

// Referenced only while a hash is under way: an idle child never keeps the server's process alive.
function idle(c: ChildProcess): void {
  c.unref();
  (c.channel as { unref?: () => void } | undefined)?.unref?.();
}

function busy(c: ChildProcess): void {
  c.ref();
  (c.channel as { ref?: () => void } | undefined)?.ref?.();
}

// A dead child fails what it held; the next hash starts a new one.
function fail(c: ChildProcess, err: Error): void {
  if (child !== c) return;
  child = null;
  for (const p of pending.values()) p.reject(err);
  pending.clear();
}

/**
 * Starts the child process now (idempotent), so that starting it (a Node.js process: tens of milliseconds) happens
 * when the console starts, not in the middle of the first burst of sign-ins.
 */
export function prestartScryptWorker(): void {
  started();
}

/**
 * scrypt(password, salt) in the child process: `keyBytes` bytes, `options` as node:crypto's scrypt takes
 * them (N, r, p, maxmem). Hashes run in the child's thread pool (four at once at most); callers bound how many run.
 * @throws the child's error (bad parameters) or when the child died.
 */
export function scryptInWorker(
  password: string,
  salt: Buffer,
  keyBytes: number,
  options: { N: number; r: number; p: number; maxmem: number },
): Promise<Buffer> {
  const c = started();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    if (!pending.size) busy(c);
    pending.set(id, { resolve, reject });
    c.send({ id, password, salt: salt.toString('base64'), keyBytes, options });
  });
}
