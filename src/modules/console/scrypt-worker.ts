import os from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * scrypt in a worker thread of the lowest CPU priority (nice 19 on Linux, where a thread can be given its own),
 * so that password checks only use CPU the HTTP server does not need: a flood of sign-ins then slows sign-ins,
 * not integrators. The worker's code is inline JavaScript, so it runs the same under tsx and compiled.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
try {
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  if (tid) require('node:os').setPriority(tid, ${os.constants.priority.PRIORITY_LOW});
} catch {}
parentPort.on('message', ({ id, password, salt, keyBytes, options }) => {
  try {
    const key = scryptSync(password, Buffer.from(salt), keyBytes, options);
    parentPort.postMessage({ id, key });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message || err) });
  }
});
`;

interface Pending {
  resolve: (key: Buffer) => void;
  reject: (err: Error) => void;
}

let worker: Worker | null = null;
let nextId = 0;
const pending = new Map<number, Pending>();

function started(): Worker {
  if (worker) return worker;
  const w = new Worker(WORKER_SOURCE, { eval: true });
  w.on('message', (m: { id: number; key?: Uint8Array; error?: string }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (!pending.size) w.unref();
    if (!p) return;
    if (m.error || !m.key) p.reject(new Error(m.error ?? 'scrypt failed'));
    else p.resolve(Buffer.from(m.key));
  });
  w.on('error', (err) => fail(err));
  w.on('exit', () => fail(new Error('the scrypt worker stopped')));
  // Referenced only while a hash is under way (below): an idle worker never keeps the process alive.
  w.unref();
  worker = w;
  return w;
}

// A dead worker fails what it held; the next hash starts a new one.
function fail(err: Error): void {
  worker = null;
  for (const p of pending.values()) p.reject(err);
  pending.clear();
}

/**
 * Starts the worker thread now (idempotent), so that starting it (a JavaScript engine of its own: tens of
 * milliseconds) happens when the console starts, not in the middle of the first burst of sign-ins.
 */
export function prestartScryptWorker(): void {
  started();
}

/**
 * scrypt(password, salt) in the low-priority worker: `keyBytes` bytes, `options` as node:crypto's scrypt takes them
 * (N, r, p, maxmem). Hashes run one after another in that thread; callers bound how many may wait.
 * @throws the worker's error (bad parameters) or when the worker died.
 */
export function scryptInWorker(
  password: string,
  salt: Buffer,
  keyBytes: number,
  options: { N: number; r: number; p: number; maxmem: number },
): Promise<Buffer> {
  const w = started();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    if (!pending.size) w.ref();
    pending.set(id, { resolve, reject });
    w.postMessage({ id, password, salt: new Uint8Array(salt), keyBytes, options });
  });
}
