// `npm run build`: compiles src/ to dist/ with tsconfig.build.json and copies what the code reads at run time
// beside it (views, CSS/JS assets: every non-TypeScript file under src/). migrations/ and data/ are not copied:
// the compiled files find them at the package root, as the sources do (dist/ mirrors src/ one level down).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');

fs.rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (compiled.status !== 0) process.exit(compiled.status ?? 1);

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
process.stdout.write(`dist/ built (${copied} asset files copied)\n`);
