#!/usr/bin/env node
// The `filing-compliance` command. An installed package runs its compiled copy (dist/, built when packed). In a
// checkout of the service's repository, where dist/ may not be built yet, it runs the TypeScript source through
// tsx (a development dependency there), so `npx filing-compliance listen …` works right after `npm ci`.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/main.js', import.meta.url);
const source = new URL('../src/main.ts', import.meta.url);

async function start() {
  if (existsSync(compiled)) return import(compiled.href);
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch {
    console.error(
      'filing-compliance: the SDK is not built; run `npm run build` in sdk/ (or `npm run sdk:build` at the repository root)',
    );
    process.exitCode = 1;
    return undefined;
  }
  register();
  return import(source.href);
}

start().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
