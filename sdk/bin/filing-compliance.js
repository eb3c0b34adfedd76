#!/usr/bin/env node
// The `filing-compliance` command: the compiled command line (npm run build in sdk/ makes dist/).
import('../dist/main.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist')) {
    console.error('filing-compliance: the SDK is not built; run `npm run build` in sdk/ (or `npm run sdk:build` at the repository root)');
  } else {
    console.error(err);
  }
  process.exitCode = 1;
});
