import { it, expect } from 'vitest';
import { createTestApp } from './harness.js';
it('openapi', async () => {
  const t = await createTestApp();
  const res = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
  const doc = res.json();
  console.log(Object.keys(doc.paths).join(' '));
  console.log(JSON.stringify(doc.paths['/auth/magic-link'].post.responses['201']).slice(0, 300));
  console.log(JSON.stringify(doc.paths['/organization'].patch.requestBody).slice(0, 300));
  await t.close();
});
