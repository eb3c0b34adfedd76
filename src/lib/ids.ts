import { monotonicFactory } from 'ulid';

/** Every id prefix of the service, in one map (spec: user_, comp_, order_, evt_, whsec_ ...). */
export const ID_PREFIX = {
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
} as const;

/** A key of ID_PREFIX, e.g. `'user'` -> ids `user_...`. */
export type IdKind = keyof typeof ID_PREFIX;

const ulid = monotonicFactory();

/** A new time-sortable id such as `user_01JD3Q...` (prefix + '_' + lower-case ULID). */
export function newId(kind: IdKind): string {
  return `${ID_PREFIX[kind]}_${ulid().toLowerCase()}`;
}

/** True when `id` looks like an id of `kind` (used to tell ids from slugs and emails). */
export function isId(kind: IdKind, id: string): boolean {
  return id.startsWith(`${ID_PREFIX[kind]}_`);
}
