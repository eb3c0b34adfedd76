// `npm run build`: compiles src/ to dist/ (one JavaScript file and its source map per TypeScript file, with esbuild,
// the compiler tsx runs the sources with) and copies what the code reads at run time beside it (views, CSS/JS
// assets: every non-TypeScript file under src/). migrations/ and data/ are not copied: the compiled files find them
// at the package root, as the sources do (dist/ mirrors src/ one level down).
//
// Types are checked by `npm run typecheck` (`npm test` runs it first), not here: esbuild compiles each file on its
// own (tsconfig's isolatedModules guarantees that is the same code tsc would emit) in about a second, where tsc's
// emit took half a minute.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');

fs.rmSync(dist, { recursive: true, force: true });
const entryPoints = fs
  .readdirSync(src, { recursive: true })
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
  .map((file) => path.join(src, file));
const { compilerOptions } = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.json'), 'utf8'));
await build({
  entryPoints,
  outdir: dist,
  outbase: src,
  bundle: false,
  format: 'esm',
  platform: 'node',
  // The oldest runtime the service supports (package.json `engines`, and Node.js 20 for development machines).
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
  tsconfigRaw: { compilerOptions },
});

let copied = 0;
fs.cpSync(src, dist, {
  recursive: true,
  filter: (from) => {
    if (fs.statSync(from).isDirectory()) return true;
    if (from.endsWith('.ts')) return false;
    copied += 1;
    return true;
  },
});
process.stdout.write(`dist/ built: ${entryPoints.length} files compiled, ${copied} asset files copied\n`);
