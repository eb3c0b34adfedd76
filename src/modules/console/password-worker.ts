import { createRequire } from 'node:module';
import type { Options } from '@node-rs/argon2';
import { type ChildProcess, spawn } from 'node:child_process';

/**
 * Password hashing in a child process, so that the memory of password checks cannot touch the server's: each hash
 * maps, fills and unmaps tens of MiB (argon2id) or 128 MiB (scrypt, older hashes), and in a thread of the server's own
 * process those mappings hold the address-space lock that the server's allocations and garbage collection also take,
 * which stalled integrators' requests for tens of milliseconds per hash (measured by the `signin` bench section). The
 * child runs at the server's own CPU priority: at the lowest, a machine busy with other work could starve a check past
 * the sign-in's answer bound, and no operator could sign in (AUTH-8); what hashing may take from the API is bounded by
 * PasswordCheckQueue's CPU budget instead. Hashes run in the child's thread pool, so the checks the queue allows at
 * once overlap. The child's code is inline JavaScript (argon2id from `@node-rs/argon2`, whose path the parent
 * resolves), so it runs the same under tsx and compiled; it exits when the server's process goes away.
 */
const CHILD_SOURCE = `
const { scrypt } = require('node:crypto');
const argon2 = require(process.argv[1]);
process.on('disconnect', () => process.exit(0));
const answer = (id, work) =>
  Promise.resolve()
    .then(work)
    .then((result) => process.send({ id, result }), (err) => process.send({ id, error: String((err && err.message) || err) }));
process.on('message', ({ id, kind, password, salt, keyBytes, options, hash }) => {
  if (kind === 'argon2id-hash') return answer(id, () => argon2.hash(password, { ...options, algorithm: 2 }));
  if (kind === 'argon2id-verify') return answer(id, () => argon2.verify(hash, password));
  answer(id, () => new Promise((resolve, reject) =>
    scrypt(password, Buffer.from(salt, 'base64'), keyBytes, options, (err, key) => (err ? reject(err) : resolve(key.toString('base64'))))));
});
`;

interface Pending {
  resolve: (result: string | boolean) => void;
  reject: (err: Error) => void;
}

let child: ChildProcess | null = null;
let nextId = 0;
const pending = new Map<number, Pending>();

function started(): ChildProcess {
  if (child) return child;
  const argon2Path = createRequire(import.meta.url).resolve('@node-rs/argon2');
  const c: ChildProcess = spawn(process.execPath, ['-e', CHILD_SOURCE, argon2Path], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    // Loaders or profilers the parent was started with have nothing to do in this child.
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  c.on('message', (m: { id: number; result?: string | boolean; error?: string }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (!pending.size) idle(c);
    if (!p) return;
    if (m.error !== undefined || m.result === undefined) p.reject(new Error(m.error ?? 'password hashing failed'));
    else p.resolve(m.result);
  });
  c.on('error', (err) => fail(c, err));
  c.on('exit', () => fail(c, new Error('the password hashing process stopped')));
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
export function prestartPasswordWorker(): void {
  started();
}

type Job =
  | { kind: 'scrypt'; password: string; salt: string; keyBytes: number; options: ScryptOptions }
  | { kind: 'argon2id-hash'; password: string; options: Argon2Options }
  | { kind: 'argon2id-verify'; password: string; hash: string };

/** scrypt's cost parameters as node:crypto's scrypt takes them (N, r, p; maxmem in bytes). */
export interface ScryptOptions {
  N: number;
  r: number;
  p: number;
  maxmem: number;
}

/** argon2id's cost parameters: memoryCost in KiB, timeCost in passes, parallelism in lanes. */
export type Argon2Options = Required<Pick<Options, 'memoryCost' | 'timeCost' | 'parallelism'>>;

function run(job: Job): Promise<string | boolean> {
  const c = started();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    if (!pending.size) busy(c);
    pending.set(id, { resolve, reject });
    c.send({ id, ...job });
  });
}

/**
 * scrypt(password, salt) in the child process: `keyBytes` bytes. Hashes run in the child's thread pool (four at once
 * at most); callers bound how many run.
 * @throws the child's error (bad parameters) or when the child died.
 */
export async function scryptInWorker(
  password: string,
  salt: Buffer,
  keyBytes: number,
  options: ScryptOptions,
): Promise<Buffer> {
  const key = await run({ kind: 'scrypt', password, salt: salt.toString('base64'), keyBytes, options });
  return Buffer.from(String(key), 'base64');
}

/**
 * An argon2id hash of `password` with a fresh random salt, made in the child process.
 * @returns the PHC string (`$argon2id$v=19$m=…,t=…,p=…$<salt>$<hash>`).
 * @throws when the child died.
 */
export async function argon2idHashInWorker(password: string, options: Argon2Options): Promise<string> {
  return String(await run({ kind: 'argon2id-hash', password, options }));
}

/**
 * Whether `password` matches the argon2id PHC string `hash` (compared in constant time by the library), checked in the
 * child process with the parameters written in the hash.
 * @throws on a malformed hash, or when the child died.
 */
export async function argon2idVerifyInWorker(password: string, hash: string): Promise<boolean> {
  return (await run({ kind: 'argon2id-verify', password, hash })) === true;
}
