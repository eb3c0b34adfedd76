/**
 * `npm run sdk:generate`: regenerates sdk/src/generated/ from the test environment's OpenAPI document (which has
 * every operation, the test helpers included). Commit the result; test/sdk-generated.test.ts fails while the
 * committed files differ from what the current routes produce.
 */
import fs from 'node:fs';
import path from 'node:path';
import { generateSources } from '../sdk/scripts/generate.js';
import { servedDocuments } from './openapi-documents.js';

const dir = path.resolve('sdk/src/generated');
const { test } = await servedDocuments();
for (const file of await generateSources(test)) {
  fs.writeFileSync(path.join(dir, file.name), file.contents);
  process.stdout.write(`${path.join(dir, file.name)}\n`);
}
