import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { TestApp, TestTenant } from './harness.js';

/**
 * A fake DNS for white-label domain verification: `publish(name, value)` adds a TXT record, `withdraw(name)` removes
 * a name's records, `fail(name, code)` makes its look-up fail like an unanswered query (e.g. ETIMEOUT), and the app's
 * `ctx.resolveTxt` answers from these records (ENODATA for names without any), like `dns.promises.resolveTxt`.
 * `lookups` lists every name looked up, in order.
 */
export function fakeDns(t: TestApp) {
  const records = new Map<string, string[][]>();
  const failures = new Map<string, string>();
  const lookups: string[] = [];
  t.ctx.resolveTxt = async (name: string) => {
    lookups.push(name);
    const failure = failures.get(name);
    if (failure) throw Object.assign(new Error(`queryTxt ${failure} ${name}`), { code: failure });
    const found = records.get(name);
    if (!found) throw Object.assign(new Error(`queryTxt ENODATA ${name}`), { code: 'ENODATA' });
    return found;
  };
  return {
    lookups,
    publish(name: string, value: string) {
      records.set(name, [...(records.get(name) ?? []), [value]]);
    },
    withdraw(name: string) {
      records.delete(name);
    },
    fail(name: string, code: string | null) {
      if (code) failures.set(name, code);
      else failures.delete(name);
    },
  };
}

/**
 * Requests `domain` for the tenant with its live key and publishes the TXT record the answer names, as an integrator
 * would. Returns the record. Throws with the answer on any unexpected status.
 */
export async function requestDomain(tenant: TestTenant, domain: string, dns: ReturnType<typeof fakeDns>) {
  const set = await tenant.api('PATCH', '/organization', { whiteLabelDomain: domain }, { env: 'live' });
  if (set.statusCode !== 200) throw new Error(`requestDomain PATCH: ${set.statusCode} ${set.body}`);
  const { recordName, recordValue } = set.json().whiteLabelDomainVerification as Record<string, string>;
  dns.publish(recordName, recordValue);
  return { recordName, recordValue };
}

/** Verifies the tenant's requested domain with its live key; returns the organization. Throws unless 200. */
export async function verifyDomain(tenant: TestTenant) {
  const verified = await tenant.api('POST', '/organization/white-label-domain/verify', undefined, { env: 'live' });
  if (verified.statusCode !== 200) throw new Error(`verifyDomain: ${verified.statusCode} ${verified.body}`);
  return verified.json();
}

/**
 * Requests `domain` for the tenant with its live key, publishes the TXT record the answer names and verifies it,
 * as an integrator would. Returns the verified organization. Throws with the answer on any unexpected status.
 */
export async function setVerifiedDomain(t: TestApp, tenant: TestTenant, domain: string, dns = fakeDns(t)) {
  await requestDomain(tenant, domain, dns);
  return verifyDomain(tenant);
}

/**
 * Holds the listening connection of the app's verified-domain list (ORG-6): no change notification reaches this
 * process until the returned function releases it, so a test sees what the process knows without them.
 */
export function holdDomainNotifications(t: TestApp): () => void {
  const listener = (domainListener(t).connection as any).stream;
  listener.pause();
  return () => listener.resume();
}

/**
 * Resolves once the app's verified-domain listener (ORG-6) has heard every change notification committed before the
 * call: PostgreSQL delivers them in commit order, so when a marker sent now arrives, no earlier change is still on
 * its way to drop the list during what the test measures next.
 */
export async function settleDomainNotifications(t: TestApp): Promise<void> {
  const client = domainListener(t);
  const marker = `settled-${randomUUID()}`;
  const heard = new Promise<void>((resolve) => {
    const onNotification = (n: pg.Notification) => {
      if (n.payload !== marker) return;
      client.off('notification', onNotification);
      resolve();
    };
    client.on('notification', onNotification);
  });
  await t.ctx.pool.query("SELECT pg_notify('white_label_domains_changed', $1)", [marker]);
  await heard;
}

/** The listening connection of the app's verified-domain list (its NotifiedCache's client). */
function domainListener(t: TestApp): pg.Client {
  return (t.app.whiteLabelDomains as any).cache.client as pg.Client;
}
