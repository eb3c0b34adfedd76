import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/** An address a webhook host resolved to and that passed the checks; deliveries connect to exactly this. */
export interface VettedAddress {
  address: string;
  family: 4 | 6;
}

/** A webhook URL the service refuses to call; the message is safe to show to the integrator. */
export class UnsafeWebhookUrlError extends Error {}

/** The host has no address right now (not set up yet, or no resolver): nothing to judge, nothing to connect to. */
export class UnresolvableHostError extends UnsafeWebhookUrlError {}

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
 * Checks a webhook URL and resolves its host (WH-13, WH-14).
 * - Always: an absolute http(s) URL without user name or password.
 * - Unless `allowPrivateNetworks` (WEBHOOK_ALLOW_PRIVATE_NETWORKS=true): https only, and every address the
 *   host resolves to (node:dns lookup, all addresses) must be public. Called at create/update and again
 *   before every delivery attempt, which then connects to the returned address (DNS-rebinding defence).
 * @returns the vetted addresses, or null when private networks are allowed (the host is then not pinned).
 * @throws UnsafeWebhookUrlError with a message naming the problem; its subclass UnresolvableHostError when the
 *   host has no address.
 */
export async function vetWebhookUrl(url: string, allowPrivateNetworks: boolean): Promise<VettedAddress[] | null> {
  const parsed = parseWebhookUrl(url);
  if (allowPrivateNetworks) return null;
  if (parsed.protocol !== 'https:') throw new UnsafeWebhookUrlError('must use https');
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  const addresses = ipaddr.isValid(host)
    ? [{ address: host, family: host.includes(':') ? 6 : 4 } as VettedAddress]
    : await resolveAll(host);
  for (const a of addresses) {
    if (!isPublicAddress(a.address)) {
      // WH-14: never what the host resolves to, nor which kind of private range: the answer would map internal DNS.
      throw new UnsafeWebhookUrlError(NON_PUBLIC_MESSAGE);
    }
  }
  return addresses;
}

/** The one message for a host that resolves to any non-public address (WH-14). */
export const NON_PUBLIC_MESSAGE =
  'resolves to a private or loopback address; webhook URLs must resolve to public addresses';

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

async function resolveAll(host: string): Promise<VettedAddress[]> {
  try {
    const found = await lookup(host, { all: true, verbatim: true });
    if (!found.length) throw new Error('no addresses');
    return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  } catch {
    throw new UnresolvableHostError(`host ${host} does not resolve`);
  }
}
