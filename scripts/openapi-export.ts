/**
 * `npm run openapi:export [-- <dir>]`: writes the served OpenAPI documents to `<dir>/live.json` and
 * `<dir>/test.json` (default .data/openapi), for `npm run lint:openapi` and for other tools.
 */
import fs from 'node:fs';
import path from 'node:path';
import { servedDocuments } from './openapi-documents.js';

const dir = path.resolve(process.argv[2] ?? '.data/openapi');
fs.mkdirSync(dir, { recursive: true });
for (const [environment, document] of Object.entries(await servedDocuments())) {
  const file = path.join(dir, `${environment}.json`);
  fs.writeFileSync(file, `${JSON.stringify(document, null, 2)}\n`);
  process.stdout.write(`${file}\n`);
}
