// `prepare`: builds dist/ when the SDK is installed from this directory into another project
// (`npm install <checkout>/sdk`), which links the directory as it is. The repository's own `npm ci` (run in the
// checkout or in sdk/) skips it: its tests and tools use the TypeScript source, and `npm pack` builds in `prepack`.
import { execSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const from = path.resolve(process.env.INIT_CWD ?? process.cwd());
if (from !== sdk && from !== path.dirname(sdk)) execSync('npm run build', { cwd: sdk, stdio: 'inherit' });
