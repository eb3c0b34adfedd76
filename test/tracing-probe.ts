// Run by test/tracing.test.ts as `node --import tsx --import ./src/instrumentation.ts test/tracing-probe.ts` (how the
// entry points are started) with OTEL_TRACES_EXPORTER=console: one span around a query and a request to a local
// server, so the console exporter prints the spans pg, undici and http made, if the preload patched them.
import { trace } from '@opentelemetry/api';
import pg from 'pg';
import { request } from 'undici';
import { flushTracing } from '../src/lib/trace-context.js';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
const server = (await import('node:http')).createServer((_req, res) => res.end('ok'));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as { port: number }).port;
await trace.getTracer('probe').startActiveSpan('probe', async (span) => {
  await pool.query('SELECT 1');
  await (await request(`http://127.0.0.1:${port}/`)).body.text();
  span.end();
});
await pool.end();
server.close();
await flushTracing();
