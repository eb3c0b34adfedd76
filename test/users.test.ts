import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, uniqueEmail } from './factories.js';
import { createTestApp, type TestApp, type TestTenant } from './harness.js';

let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.newTenant('Users Co');
});
afterAll(() => t.close());

const fieldsOf = (res: { json: () => any }) => (res.json().errors ?? []).map((e: { field: string }) => e.field);

describe('POST /users', () => {
  it('creates a user and returns all six fields', async () => {
    const email = uniqueEmail('ada');
    const res = await tenant.api('POST', '/users', { fullName: 'Ada Lovelace', email, phoneNumber: '+14155550123' });
    expect(res.statusCode).toBe(201);
    const user = res.json();
    expect(Object.keys(user).sort()).toEqual(['createdAt', 'email', 'fullName', 'id', 'phoneNumber', 'updatedAt']);
    expect(user).toMatchObject({ fullName: 'Ada Lovelace', email, phoneNumber: '+14155550123' });
    expect(user.id).toMatch(/^user_[0-9a-z]{26}$/);
    expect(new Date(user.createdAt).toISOString()).toBe(user.createdAt);
    expect(new Date(user.updatedAt).toISOString()).toBe(user.updatedAt);
  });

  it('returns phoneNumber null when it is absent or null', async () => {
    const absent = await tenant.api('POST', '/users', { fullName: 'No Phone', email: uniqueEmail() });
    expect(absent.statusCode).toBe(201);
    expect(absent.json().phoneNumber).toBeNull();
    expect('phoneNumber' in absent.json()).toBe(true);
    const explicit = await tenant.api('POST', '/users', {
      fullName: 'Null Phone',
      email: uniqueEmail(),
      phoneNumber: null,
    });
    expect(explicit.statusCode).toBe(201);
    expect(explicit.json().phoneNumber).toBeNull();
  });

  it('accepts international E.164 numbers', async () => {
    const res = await tenant.api('POST', '/users', {
      fullName: 'Hans',
      email: uniqueEmail(),
      phoneNumber: '+4915123456789',
    });
    expect(res.statusCode).toBe(201);
  });

  it('accepts E.164 numbers that are only placeholders (+1 555 …, +1234567890): the rule is the format', async () => {
    for (const phoneNumber of ['+15555555555', '+15551234567', '+1234567890']) {
      const res = await tenant.api('POST', '/users', { fullName: 'Test Number', email: uniqueEmail(), phoneNumber });
      expect(res.statusCode, `${phoneNumber}: ${res.body}`).toBe(201);
      expect(res.json().phoneNumber).toBe(phoneNumber);
    }
  });

  type Invalid = [rule: string, body: Record<string, unknown>, field: string];
  const valid = { fullName: 'A', email: 'a@example.com' };
  const badPhone = (rule: string, phoneNumber: unknown): Invalid => [
    `phoneNumber ${rule}`,
    { ...valid, phoneNumber },
    'phoneNumber',
  ];
  const invalid: Invalid[] = [
    ['fullName is required', { email: 'a@example.com' }, 'fullName'],
    ['fullName must not be empty', { ...valid, fullName: '' }, 'fullName'],
    ['email is required', { fullName: 'A' }, 'email'],
    ['email must be an email address', { ...valid, email: 'not-an-email' }, 'email'],
    ['email needs a domain with a TLD', { ...valid, email: 'a@localhost' }, 'email'],
    badPhone('must be E.164 (no + prefix)', '4155550123'),
    badPhone('must be E.164 (no spaces)', '+1 415 555 0123'),
    badPhone('must be a valid number', '+1555'),
    badPhone('needs an existing country calling code', '+99912345678'),
    badPhone('must not start with +0', '+04155550123'),
    badPhone('has at most 15 digits', '+1415555012345678'),
    badPhone('must be a string', 4155550123),
    ['unknown fields are refused', { ...valid, nickname: 'x' }, 'nickname'],
  ];
  for (const [rule, body, field] of invalid) {
    it(`400: ${rule}`, async () => {
      const res = await tenant.api('POST', '/users', body);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('validation_error');
      expect(fieldsOf(res)).toContain(field);
      expect(res.json().message).toContain(field);
    });
  }

  it('names every bad field at once', async () => {
    const res = await tenant.api('POST', '/users', { fullName: '', email: 'nope', phoneNumber: '+1555' });
    expect(res.statusCode).toBe(400);
    expect(fieldsOf(res).sort()).toEqual(['email', 'fullName', 'phoneNumber']);
  });

  it('409 for the same email twice in a tenant, whatever its case', async () => {
    const email = uniqueEmail('dup');
    expect((await tenant.api('POST', '/users', { fullName: 'One', email })).statusCode).toBe(201);
    const again = await tenant.api('POST', '/users', { fullName: 'Two', email: email.toUpperCase() });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'conflict' });
    expect(again.json().message.toLowerCase()).toContain(email);
  });

  it('allows the same email in another environment and another organization', async () => {
    const email = uniqueEmail('shared');
    expect((await tenant.api('POST', '/users', { fullName: 'Test', email })).statusCode).toBe(201);
    expect((await tenant.api('POST', '/users', { fullName: 'Live', email }, { env: 'live' })).statusCode).toBe(201);
    const other = await t.newTenant('Other');
    expect((await other.api('POST', '/users', { fullName: 'Other', email })).statusCode).toBe(201);
  });
});

describe('GET /users/{userIdOrEmail}', () => {
  it('finds a user by id and by email in any case', async () => {
    const user = await createUser(tenant, 'test', { email: uniqueEmail('Grace.Hopper') });
    const byId = await tenant.api('GET', `/users/${user.id}`);
    expect(byId.statusCode).toBe(200);
    expect(byId.json()).toEqual(user);
    const byEmail = await tenant.api('GET', `/users/${encodeURIComponent(user.email.toUpperCase())}`);
    expect(byEmail.statusCode).toBe(200);
    expect(byEmail.json()).toEqual(user);
  });

  it('finds emails with a plus sign', async () => {
    const user = await createUser(tenant, 'test', { email: `ada+${Date.now()}@example.com` });
    const res = await tenant.api('GET', `/users/${encodeURIComponent(user.email)}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().id).toBe(user.id);
  });

  it('404 for an unknown id or email', async () => {
    for (const key of ['user_01hzzzzzzzzzzzzzzzzzzzzzzz', 'nobody@example.com']) {
      const res = await tenant.api('GET', `/users/${encodeURIComponent(key)}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 'not_found', message: expect.stringContaining(key) });
    }
  });

  it('keeps test and live data apart: a user created with the test key is 404 with the live key', async () => {
    const user = await createUser(tenant, 'test');
    expect((await tenant.api('GET', `/users/${user.id}`, undefined, { env: 'live' })).statusCode).toBe(404);
    expect(
      (await tenant.api('GET', `/users/${encodeURIComponent(user.email)}`, undefined, { env: 'live' })).statusCode,
    ).toBe(404);
  });
});

describe('GET /users', () => {
  it('pages through the users of the environment, newest first', async () => {
    const own = await t.newTenant('Paging');
    const created = [];
    for (let i = 0; i < 3; i++) created.push(await createUser(own));
    await createUser(own, 'live');
    const first = await own.api('GET', '/users?limit=2');
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ object: 'list', hasMore: true });
    expect(first.json().data.map((u: { id: string }) => u.id)).toEqual([created[2].id, created[1].id]);
    const second = await own.api('GET', `/users?limit=2&startingAfter=${created[1].id}`);
    expect(second.json()).toMatchObject({ object: 'list', hasMore: false });
    expect(second.json().data.map((u: { id: string }) => u.id)).toEqual([created[0].id]);
  });

  it('400 for a limit out of range', async () => {
    const res = await tenant.api('GET', '/users?limit=0');
    expect(res.statusCode).toBe(400);
    expect(fieldsOf(res)).toContain('limit');
  });
});
