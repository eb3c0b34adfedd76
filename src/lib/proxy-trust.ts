import proxyAddr from '@fastify/proxy-addr';

/**
 * Which proxies in front of the service are trusted to say who the client is (TRUST_PROXY, SEC-8): none (`false`),
 * the nearest `hops` ones whatever their address, or those whose address is in `addresses` (IP addresses, CIDR
 * ranges, or proxy-addr's names `loopback`, `linklocal`, `uniquelocal`).
 */
export type TrustProxy = false | { hops: number } | { addresses: string[] };

/** proxy-addr's trust function: whether the hop `hop` (0: the socket's peer) at `address` is a trusted proxy. */
export type ProxyTrustFunction = (address: string, hop: number) => boolean;

/** How TRUST_PROXY may be written, as the message refusing a bad value says it. */
const TRUST_PROXY_FORMS =
  'false (no proxy), the number of proxies in front of the service (e.g. 1), or the addresses of the trusted proxies as IP addresses or CIDR ranges, comma-separated (e.g. 10.0.0.0/8,192.168.1.5; loopback, linklocal and uniquelocal name their ranges)';

/**
 * Reads TRUST_PROXY (SEC-8). `true`, which would trust every hop so that the leftmost X-Forwarded-For entry (which
 * the client writes) became the client's address, is refused.
 * @returns the setting, or `problem`: why the value is refused (a message naming the variable and its forms).
 */
export function parseTrustProxy(value: string | undefined): { trust: TrustProxy } | { problem: string } {
  const v = value?.trim() ?? 'false';
  if (v === 'false' || v === '0') return { trust: false };
  if (v === 'true') {
    return {
      problem: `TRUST_PROXY: true is no longer accepted: it trusts every address, so any client could choose the address it is counted under by sending X-Forwarded-For. Set ${TRUST_PROXY_FORMS}`,
    };
  }
  if (/^[0-9]+$/.test(v)) return { trust: { hops: Number(v) } };
  const addresses = v.split(',').map((a) => a.trim());
  try {
    proxyAddr.compile(addresses);
  } catch (err) {
    return { problem: `TRUST_PROXY: ${(err as Error).message}; set ${TRUST_PROXY_FORMS}` };
  }
  return { trust: { addresses } };
}

/**
 * The trust function Fastify is given (`trustProxy`) and the host routing uses, so both agree on which hops are
 * proxies; false when no proxy is trusted. The client address is then the first untrusted hop from the right of
 * X-Forwarded-For (the socket's peer first), and X-Forwarded-Host/-Proto count only when the peer is trusted.
 */
export function proxyTrustFunction(trust: TrustProxy): ProxyTrustFunction | false {
  if (trust === false) return false;
  if ('hops' in trust) {
    const { hops } = trust;
    return (_address, hop) => hop < hops;
  }
  return proxyAddr.compile(trust.addresses);
}
