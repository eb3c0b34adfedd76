import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scryptInWorker } from '../src/modules/console/password-worker.js';
import { consoleClient, newOperator, signIn } from './console-helpers.js';
import { createTestApp, type TestApp } from './harness.js';

/*
 * AUTH-9: passwords are hashed with argon2id; a hash made before (scrypt) still signs its operator in, and is replaced
 * by an argon2id hash at that sign-in.
 */
describe('operator password hashes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  const storedHash = async (id: string): Promise<string> =>
    (await t.ctx.pool.query('SELECT password_hash FROM operators WHERE id = $1', [id])).rows[0].password_hash;

  it('signs an operator with an older scrypt hash in, replaces the hash with argon2id, and still refuses a wrong password', async () => {
    const op = await newOperator(t.ctx.pool);
    const password = 'an older password of 2025';
    const salt = Buffer.alloc(16, 7);
    // A small N keeps the test quick; the parameters are read from the hash, as they are for any older hash.
    const key = await scryptInWorker(password, salt, 64, { N: 1024, r: 8, p: 1, maxmem: 32 * 1024 * 1024 });
    const scryptHash = `scrypt$N=1024,r=8,p=1$${salt.toString('base64')}$${key.toString('base64')}`;
    await t.ctx.pool.query('UPDATE operators SET password_hash = $2 WHERE id = $1', [op.id, scryptHash]);

    expect((await signIn(consoleClient(t.app, {}, '192.0.2.71'), op.email, 'not the password')).statusCode).toBe(401);
    expect(await storedHash(op.id)).toBe(scryptHash);

    expect((await signIn(consoleClient(t.app, {}, '192.0.2.72'), op.email, password)).statusCode).toBe(303);
    const upgraded = await storedHash(op.id);
    expect(upgraded).toMatch(/^\$argon2id\$v=19\$m=47104,t=1,p=1\$/);
    expect(upgraded).not.toContain(password);

    expect((await signIn(consoleClient(t.app, {}, '192.0.2.73'), op.email, password)).statusCode).toBe(303);
    expect(await storedHash(op.id)).toBe(upgraded);
    expect(
      (await signIn(consoleClient(t.app, {}, '192.0.2.74'), op.email, 'an older password of 2024')).statusCode,
    ).toBe(401);
  });
});
