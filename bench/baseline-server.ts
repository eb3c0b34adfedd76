/**
 * The bare baseline of every bench ratio: Fastify + node-postgres with nothing of ours, in its own process.
 * `POST /insert` writes one row per request (its own transaction, one round trip); `GET /select/:id` reads one
 * row by primary key. Pool size BENCH_POOL_SIZE (default 10), the same as the service's request pool.
 * Prints `READY <base url>` when listening.
 */
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.BENCH_POOL_SIZE ?? 10),
});
await pool.query(
  `CREATE TABLE IF NOT EXISTS bench_baseline (id bigserial PRIMARY KEY, payload jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
);
const app = Fastify({ logger: false });
app.post('/insert', async (request) => {
  const { rows } = await pool.query('INSERT INTO bench_baseline (payload) VALUES ($1) RETURNING id', [request.body]);
  return { id: rows[0].id };
});
app.get<{ Params: { id: string } }>('/select/:id', async (request, reply) => {
  const { rows } = await pool.query('SELECT id, payload, created_at FROM bench_baseline WHERE id = $1', [
    request.params.id,
  ]);
  return rows[0] ?? reply.status(404).send({});
});
const url = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`READY ${url}\n`);
process.on(
  'SIGTERM',
  () =>
    void app
      .close()
      .then(() => pool.end())
      .then(() => process.exit(0)),
);
