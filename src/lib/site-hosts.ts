import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { Config } from '../config-types.js';
import { proxyTrustFunction, type ProxyTrustFunction } from './proxy-trust.js';

/**
 * What a host serves (DASH-1, SEC-7): `api` the admin API, `/metrics` and `/docs` (hosts of LIVE_BASE_URL and
 * TEST_BASE_URL); `live-api` and `test-api` each environment's OpenAPI document; `console` the console
 * (CONSOLE_BASE_URL); `portal` the partner portal (PORTAL_BASE_URL); `dashboard` the dashboard at its path (DASHBOARD_BASE_URL); `white-label` the dashboard at the
 * root of a host that is none of ours (whether it is a verified domain is asked per request).
 */
export type Site = 'api' | 'live-api' | 'test-api' | 'console' | 'portal' | 'dashboard' | 'white-label';

/** The name of the route constraint that puts a route on the hosts of one site. */
export const SITE_CONSTRAINT = 'site';

/**
 * The loopback names: a base address on one of them (the defaults are on localhost) is reached under any of them,
 * as the same machine answers all three and only a local client sends them to a server that serves nothing else.
 */
const LOOPBACK_HOSTNAMES = ['localhost', '127.0.0.1', '[::1]'];

declare module 'fastify' {
  interface FastifyInstance {
    /** Which host serves what (DASH-1, SEC-7); built once from the configuration by buildApp. */
    siteHosts: SiteHosts;
  }
}

/**
 * The hosts of the configured base addresses and what each serves (SEC-7). Host names are compared in lower case
 * and without the port: cookies, the only thing a host keeps apart, do not keep ports apart either, and a proxy or
 * a port mapping may publish the service on another port than it listens on.
 */
export class SiteHosts {
  private readonly sites = new Map<string, Set<Site>>();
  private readonly trust: ProxyTrustFunction | false;

  constructor(
    config: Pick<
      Config,
      'liveBaseUrl' | 'testBaseUrl' | 'dashboardBaseUrl' | 'consoleBaseUrl' | 'portalBaseUrl' | 'trustProxy'
    >,
  ) {
    this.trust = proxyTrustFunction(config.trustProxy);
    for (const [url, sites] of [
      [config.liveBaseUrl, ['api', 'live-api']],
      [config.testBaseUrl, ['api', 'test-api']],
      [config.dashboardBaseUrl, ['dashboard']],
      [config.consoleBaseUrl, ['console']],
      [config.portalBaseUrl, ['portal']],
    ] as Array<[string, Site[]]>) {
      const hostname = new URL(url).hostname.toLowerCase();
      for (const name of LOOPBACK_HOSTNAMES.includes(hostname) ? LOOPBACK_HOSTNAMES : [hostname]) {
        const served = this.sites.get(name) ?? new Set<Site>();
        for (const site of sites) served.add(site);
        this.sites.set(name, served);
      }
    }
  }

  /**
   * The lower-case host name a request was sent to, without the port: X-Forwarded-Host (its last entry, as Fastify
   * reads it) when the socket's peer is a trusted proxy (TRUST_PROXY), else Host. '' when there is none.
   */
  hostnameOf(req: IncomingMessage): string {
    const forwarded = req.headers['x-forwarded-host'];
    const peer = req.socket?.remoteAddress;
    const trusted = forwarded && this.trust && peer && this.trust(peer, 0);
    const host = trusted ? String(forwarded).split(',').pop()!.trim() : (req.headers.host ?? '');
    const lower = host.toLowerCase();
    return lower.startsWith('[') ? lower.slice(0, lower.indexOf(']') + 1) : lower.replace(/:\d*$/, '');
  }

  /** Whether `hostname` (lower case, no port) is one of the configured base addresses' hosts (or a loopback alias). */
  isOwn(hostname: string): boolean {
    return this.sites.has(hostname);
  }

  /** Whether some host serves both sites (`white-label` shares no host with the others). */
  overlap(a: Site, b: Site): boolean {
    return [...this.sites.values()].some((served) => served.has(a) && served.has(b));
  }

  /** Whether `hostname` serves `site`; `white-label` is any non-empty host name that is not ours. */
  serves(hostname: string, site: Site): boolean {
    if (site === 'white-label') return hostname !== '' && !this.sites.has(hostname);
    return this.sites.get(hostname)?.has(site) ?? false;
  }
}

/** The derived value of the site constraint: the request's host name, boxed apart from the sites' names. */
interface RequestHost {
  hostname: string;
}

/** The route handler a constraint strategy's storage keeps, as Fastify's router declares it. */
type ConstrainedHandler = Parameters<
  ReturnType<Parameters<FastifyInstance['addConstraintStrategy']>[0]['storage']>['set']
>[1];

/**
 * Adds the `site` route constraint (SEC-7) and decorates the app with `hosts`. A route constrained to a site exists
 * only for requests to that site's hosts: elsewhere the router finds no route, so the request gets the 404 of an
 * unknown path before any hook of the route (authentication, rate limits) runs. Routes without it answer on any host.
 */
export function installSiteConstraint(app: FastifyInstance, hosts: SiteHosts): void {
  app.decorate('siteHosts', hosts);
  app.addConstraintStrategy({
    name: SITE_CONSTRAINT,
    // One store per route path and method, keeping the routes of each site on it. Two sites may share a path only
    // where no host serves both (the dashboard at the root of its own host and of the white-label hosts); otherwise
    // the route a host gets would be ambiguous, and the start stops instead. The router asks the store with a site
    // name while building it, and with a request's derived host (an object) at lookup.
    storage() {
      const handlers = new Map<Site, ConstrainedHandler>();
      return {
        get: (value: unknown) => {
          if (typeof value === 'string') return handlers.get(value as Site) ?? null;
          for (const [site, handler] of handlers)
            if (hosts.serves((value as RequestHost).hostname, site)) return handler;
          return null;
        },
        set: (value: unknown, handler: ConstrainedHandler) => {
          const site = value as Site;
          const clash = [...handlers.keys()].find((other) => other !== site && hosts.overlap(other, site));
          if (clash) throw new Error(`a path cannot be on the sites ${clash} and ${site}: a host serves both`);
          handlers.set(site, handler);
        },
      };
    },
    deriveConstraint: (req: IncomingMessage): RequestHost => ({ hostname: hosts.hostnameOf(req) }),
    mustMatchWhenDerived: false,
  });
}

/** Puts every route registered from now on in `scope` (and its children) on the hosts of `site` only (SEC-7). */
export function onlyOnSite(scope: FastifyInstance, site: Site): void {
  scope.addHook('onRoute', (route) => {
    route.constraints = { ...route.constraints, [SITE_CONSTRAINT]: site };
  });
}
