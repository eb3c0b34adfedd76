/*
 * The tenant types, in a module that imports nothing: context.ts re-exports them, and modules that context.ts
 * itself depends on (the price cache) import them from here, so no import cycle runs through context.ts.
 */

/** The environment half of a tenant (TEN-1; docs/architecture.md "Tenancy and environments"). */
export type Environment = 'live' | 'test';

/** The tenant a request acts for: every tenant-owned query filters on both fields. */
export interface Tenant {
  organizationId: string;
  environment: Environment;
}
