import { validatePhoneNumberLength } from 'libphonenumber-js/max';
import type { Tenant } from '../../context.js';
import { isUniqueViolation, type Db } from '../../lib/db.js';
import { AppError, notFound, type FieldError } from '../../lib/errors.js';
import { isId, newId } from '../../lib/ids.js';
import { toPage, type Page, type PageParams } from '../../lib/pagination.js';
import * as repo from './users.repo.js';
import type { CreateUserInput, User } from './users.schemas.js';

/** Emails are unique per tenant without regard to case (USR-3): the stored key is lower-cased. */
const normalizeEmail = (email: string): string => email.toLowerCase();

// E.164: '+', a country code not starting with 0, at most 15 digits in all; 7 is the shortest real number (e.g.
// +6831234).
const E164 = /^\+[1-9]\d{6,14}$/;

/**
 * Rules of the User table the schema cannot express: phoneNumber is in E.164 format (USR-2):
 * '+', 7 to 15 digits, and a country calling code that exists and a length that country allows at most, per
 * libphonenumber-js. Deliberately NOT libphonenumber's full "valid number" test: that refuses E.164 numbers
 * that are merely unassigned, such as the +1 555 numbers everyone uses in tests and sandboxes.
 * Email syntax is the schema's `format: 'email'` (validator's isEmail).
 * Tolerates input that failed the schema. @returns field errors, empty when valid.
 */
export function userRuleErrors(body: unknown): FieldError[] {
  const phone = typeof body === 'object' && body !== null && 'phoneNumber' in body ? body.phoneNumber : undefined;
  if (typeof phone !== 'string') return [];
  if (!E164.test(phone))
    return [
      {
        field: 'phoneNumber',
        message:
          'must be in E.164 format: + then country code and number, 7 to 15 digits, nothing else (e.g. +14155550123)',
      },
    ];
  const length = validatePhoneNumberLength(phone);
  if (length === 'INVALID_COUNTRY')
    return [{ field: 'phoneNumber', message: 'is not a valid phone number: unknown country calling code' }];
  if (length === 'TOO_LONG' || length === 'NOT_A_NUMBER')
    return [{ field: 'phoneNumber', message: 'is not a valid phone number: too long for its country' }];
  return [];
}

/**
 * Creates a user (USR-1) from a body that passed CreateUserBody and userRuleErrors (the route runs
 * both through `validated`).
 * @throws AppError conflict (409) when the email is taken in this tenant.
 */
export async function createUser(db: Db, tenant: Tenant, body: CreateUserInput): Promise<repo.UserRow> {
  try {
    return await repo.insertUser(db, tenant, {
      id: newId('user'),
      fullName: body.fullName,
      email: body.email,
      emailNormalized: normalizeEmail(body.email),
      phoneNumber: body.phoneNumber ?? null,
    });
  } catch (err) {
    if (isUniqueViolation(err, 'users_email_unique')) {
      throw new AppError(
        'conflict',
        `A user with email '${body.email}' already exists; look it up with GET /users/{email}`,
      );
    }
    throw err;
  }
}

/**
 * A user of the tenant by id (`user_…`) or by email (case-insensitive). Users of other organizations or of
 * the other environment are not found.
 * @throws AppError not_found (404).
 */
export async function findUserOrThrow(db: Db, tenant: Tenant, userIdOrEmail: string): Promise<repo.UserRow> {
  const row = isId('user', userIdOrEmail)
    ? await repo.findUserById(db, tenant, userIdOrEmail)
    : await repo.findUserByEmail(db, tenant, normalizeEmail(userIdOrEmail));
  if (!row) throw notFound('user', userIdOrEmail);
  return row;
}

/** A user of the tenant by id only, or null (for request fields such as `userId` that take an id). */
export function findUserById(db: Db, tenant: Tenant, userId: string): Promise<repo.UserRow | null> {
  return repo.findUserById(db, tenant, userId);
}

/** One page of the tenant's users, newest first (Stripe-style cursor). */
export async function listUsers(db: Db, tenant: Tenant, page: PageParams): Promise<Page<User>> {
  const limit = page.limit ?? 20;
  return toPage(await repo.listUsers(db, tenant, limit, page.startingAfter), limit, serializeUser);
}

/** The API view of a user: all six fields, phoneNumber null when absent. */
export function serializeUser(row: repo.UserRow): User {
  return {
    id: row.id,
    fullName: row.full_name,
    email: row.email,
    phoneNumber: row.phone_number,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
