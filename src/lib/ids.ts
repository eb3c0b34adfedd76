import { encodeTime, monotonicFactory } from 'ulid';
import { randomByte } from './random-pool.js';

/** Every id prefix of the service, in one map (API-4: user_, comp_, order_, evt_, ...). */
const ID_PREFIX = {
  organization: 'org',
  apiKey: 'key',
  user: 'user',
  company: 'comp',
  order: 'order',
  orderGroup: 'ordgrp',
  ledgerEntry: 'txn',
  event: 'evt',
  webhookEndpoint: 'we',
  webhookDelivery: 'wd',
  webhookAttempt: 'wa',
  document: 'doc',
  statusChange: 'fsc',
  magicLink: 'ml',
  session: 'sess',
  operator: 'op',
  payment: 'pay',
  cardCheckout: 'chk',
  cardRefund: 'rfnd',
  subscriptionRenewal: 'subren',
  subscriptionStatusChange: 'ssc',
  taxIdReveal: 'taxrev',
  member: 'mem',
  portalInvitation: 'inv',
  passwordReset: 'pwr',
  portalSession: 'psess',
  auditEntry: 'aud',
  failedApiRequest: 'freq',
  webhookRecovery: 'whrec',
  topUp: 'topup',
  autoRecharge: 'arc',
  portalSecretView: 'psv',
} as const;

/** A key of ID_PREFIX, e.g. `'user'` -> ids `user_...`. */
export type IdKind = keyof typeof ID_PREFIX;

// ulid's own generator asks the operating system for one byte per character (16 calls per id), which cost about a
// third of a millisecond per order placed; the shared pool asks once per 4,096 bytes drawn by anyone.
const ulid = monotonicFactory(() => randomByte() / 256);

/** A new time-sortable id such as `user_01JD3Q...` (prefix + '_' + lower-case ULID). */
export function newId(kind: IdKind): string {
  return `${ID_PREFIX[kind]}_${ulid().toLowerCase()}`;
}

/**
 * The smallest id of `kind` made at `at` (its milliseconds, then zeros): every id of that kind made at or after `at`
 * sorts at or after it, every one made before sorts before it, so a time range becomes a range of the id index.
 */
export function idAt(kind: IdKind, at: Date): string {
  const ms = Math.min(Math.max(at.getTime(), 0), 2 ** 48 - 1);
  return `${ID_PREFIX[kind]}_${encodeTime(ms, 10).toLowerCase()}${'0'.repeat(16)}`;
}

/** True when `id` looks like an id of `kind` (used to tell ids from slugs and emails). */
export function isId(kind: IdKind, id: string): boolean {
  return id.startsWith(`${ID_PREFIX[kind]}_`);
}
