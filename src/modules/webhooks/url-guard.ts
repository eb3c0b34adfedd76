import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/** An address a webhook host resolved to and that passed the checks; deliveries connect to exactly this. */
export interface VettedAddress {
  address: string;
  family: 4 | 6;
}

/** A webhook URL the service refuses to call; the message is safe to show to the integrator. */
export class UnsafeWebhookUrlError extends Error {}

/**
 * True when `ip` is a public unicast address. Everything else is refused: private, loopback, link-local,
 * unique-local, carrier-grade NAT, multicast, broadcast, unspecified, reserved and the IPv6 translation
 * ranges (6to4, Teredo, NAT64) that could tunnel to an internal IPv4 host. IPv4-mapped IPv6 addresses
 * (`::ffff:127.0.0.1`) are judged as the IPv4 address they carry (WH-13).
 */
export function isPublicAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  let parsed = ipaddr.parse(ip);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === 'unicast';
}

/**
 * Checks a webhook URL as it is saved, without looking its host name up (WH-13, WH-14):
 * - Always: an absolute http(s) URL without user name or password.
 * - Unless `allowPrivateNetworks` (WEBHOOK_ALLOW_PRIVATE_NETWORKS=true): https only, and an address written in the
 *   URL must be public.
 * A host name is not resolved here, `localhost` included: whether it has an address, and whether that address is
 * private, would be told apart by the answer (or its time), which maps internal DNS names for whoever probes. Every
 * attempt resolves and judges it ({@link vetWebhookUrl}).
 * @throws UnsafeWebhookUrlError with a message naming the problem (never an address the URL does not contain).
 */
export function checkWebhookUrl(url: string, allowPrivateNetworks: boolean): void {
  const parsed = parseWebhookUrl(url);
  if (allowPrivateNetworks) return;
  if (parsed.protocol !== 'https:') throw new UnsafeWebhookUrlError('must use https');
  const host = hostOf(parsed);
  if (ipaddr.isValid(host) && !isPublicAddress(host)) throw new UnsafeWebhookUrlError(NON_PUBLIC_MESSAGE);
}

/**
 * Checks a webhook URL before an attempt and resolves its host (WH-13, WH-14): {@link checkWebhookUrl}, then unless
 * private networks are allowed, every address the host resolves to (node:dns lookup, all addresses) must be public.
 * The attempt then connects to the returned address (DNS-rebinding defence).
 * @returns the vetted addresses, or null when private networks are allowed (the host is then not pinned).
 * @throws UnsafeWebhookUrlError: {@link HOST_NOT_PUBLIC_MESSAGE} alike for a host with no address and one with a
 *   non-public address (the attempt is readable by the integrator), else the message of {@link checkWebhookUrl}.
 */
export async function vetWebhookUrl(url: string, allowPrivateNetworks: boolean): Promise<VettedAddress[] | null> {
  checkWebhookUrl(url, allowPrivateNetworks);
  if (allowPrivateNetworks) return null;
  const host = hostOf(new URL(url));
  if (ipaddr.isValid(host)) return [{ address: host, family: host.includes(':') ? 6 : 4 }];
  const addresses = await resolveAll(host);
  // WH-13: never what the host resolves to, nor which kind of address, nor whether it has one.
  if (!addresses.length || !addresses.every((a) => isPublicAddress(a.address)))
    throw new UnsafeWebhookUrlError(HOST_NOT_PUBLIC_MESSAGE);
  return addresses;
}

/** The message for an address written in a webhook URL that is not public (WH-13). */
export const NON_PUBLIC_MESSAGE = 'is a private or loopback address; webhook URLs must use public addresses';

/**
 * The one message for a host name that, at an attempt, has no address or has any non-public one (WH-13): the two
 * are not told apart, so an attempt's error never says whether an internal name exists.
 */
export const HOST_NOT_PUBLIC_MESSAGE =
  'host does not resolve to public addresses only (no address, or a private or loopback one); webhook URLs must resolve to public addresses';

function parseWebhookUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UnsafeWebhookUrlError('must be an absolute URL such as https://example.com/webhooks');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new UnsafeWebhookUrlError('must use https');
  if (parsed.username || parsed.password) {
    throw new UnsafeWebhookUrlError(
      'must not contain a user name or password; verify the Service-Signature header instead',
    );
  }
  return parsed;
}

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

// Any failure (no such name, no resolver, a timeout) is "no address": it is not told apart from a private one.
async function resolveAll(host: string): Promise<VettedAddress[]> {
  try {
    const found = await lookup(host, { all: true, verbatim: true });
    return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  } catch {
    return [];
  }
}
