import fs from 'node:fs';
import type pg from 'pg';
import { dollarsToCents } from '../../lib/money.js';
import { PRODUCT_TYPES } from './pricing.js';
import * as repo from './prices.repo.js';

const dataFile = (name: string) => new URL(`../../../data/${name}`, import.meta.url);
const readJson = <T>(name: string): T => JSON.parse(fs.readFileSync(dataFile(name), 'utf8')) as T;

/** data/price-catalog.json: our service prices in whole dollars. */
interface PriceCatalogFile {
  products: Array<{ type: string; name: string; description: string; defaultAmount: number; wholesaleAmount: number }>;
}

/** data/state-fees.json: state government fees in dollars, with their sources (BILL-16). */
export interface StateFeesFile {
  asOf: string;
  states: Record<
    string,
    {
      name: string;
      llcFormation: number;
      corpFormation: number;
      llcForeignQualification: number;
      corpForeignQualification: number;
      llcAnnualReport: number;
      corpAnnualReport: number;
      [extra: string]: unknown;
    }
  >;
}

/** data/expedited-formation-fees.json: ORD-FORM-5, dollars per state (LLC only). */
interface ExpeditedFeesFile {
  states: Record<string, number>;
}

/** Reads data/price-catalog.json. The data readers throw on a missing file or bad JSON (a broken checkout). */
const loadPriceCatalogFile = (): PriceCatalogFile => readJson('price-catalog.json');
/** Reads data/state-fees.json. */
export const loadStateFeesFile = (): StateFeesFile => readJson('state-fees.json');
/** Reads data/expedited-formation-fees.json. */
const loadExpeditedFeesFile = (): ExpeditedFeesFile => readJson('expedited-formation-fees.json');

/**
 * Seeds the nine catalogue rows from data/price-catalog.json. Inserts only missing types, so the
 * operator's changes survive restarts (src/seeds.ts contract).
 */
async function seedPriceCatalog(pool: pg.Pool): Promise<void> {
  const { products } = loadPriceCatalogFile();
  for (const [i, p] of products.entries()) {
    if (!(PRODUCT_TYPES as readonly string[]).includes(p.type))
      throw new Error(`price-catalog.json: unknown product type '${p.type}'`);
    await repo.insertSeedCatalogRow(pool, {
      type: p.type,
      name: p.name,
      description: p.description,
      defaultCents: dollarsToCents(p.defaultAmount),
      wholesaleCents: dollarsToCents(p.wholesaleAmount),
      sortOrder: i + 1,
    });
  }
}

/**
 * Seeds the state fee schedule from data/state-fees.json (standard fees) and data/expedited-formation-fees.json
 * (ORD-FORM-5; BILL-16). Provenance (notes, sources, confidence, unverifiedFields, report frequencies,
 * minimum taxes) is kept in `source`. Inserts only missing states; never overwrites operator edits.
 */
async function seedStateFees(pool: pg.Pool): Promise<void> {
  const { states, asOf } = loadStateFeesFile();
  const expedited = loadExpeditedFeesFile().states;
  for (const [state, s] of Object.entries(states)) {
    const {
      name,
      llcFormation,
      corpFormation,
      llcForeignQualification,
      corpForeignQualification,
      llcAnnualReport,
      corpAnnualReport,
      ...provenance
    } = s;
    await repo.insertSeedStateFees(pool, state, {
      name,
      llc_formation_cents: dollarsToCents(llcFormation),
      corp_formation_cents: dollarsToCents(corpFormation),
      llc_foreign_cents: dollarsToCents(llcForeignQualification),
      corp_foreign_cents: dollarsToCents(corpForeignQualification),
      llc_annual_report_cents: dollarsToCents(llcAnnualReport),
      corp_annual_report_cents: dollarsToCents(corpAnnualReport),
      expedited_formation_cents: expedited[state] === undefined ? null : dollarsToCents(expedited[state]),
      source: { ...provenance, asOf },
    });
  }
}

/** Both billing seeders, in dependency order. */
export async function seedBilling(pool: pg.Pool): Promise<void> {
  await seedPriceCatalog(pool);
  await seedStateFees(pool);
}
