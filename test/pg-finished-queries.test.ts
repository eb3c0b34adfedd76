import { once } from 'node:events';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import '../src/lib/db.js';

/* A finished pg query lets go of its request's objects (src/lib/pg-finished-queries.ts), and answers as before. */

interface QueryFields {
  callback?: unknown;
  values?: unknown;
  _result?: unknown;
  _results?: unknown;
}

let client: pg.Client;
beforeAll(async () => {
  client = new pg.Client({ connectionString: inject('pgAdminUrl'), pipeline: true } as pg.ClientConfig);
  await client.connect();
});
afterAll(() => client.end());

describe('finished pg queries', () => {
  it('drop their parameters, rows and callback once answered; the answer is unchanged', async () => {
    const query = new pg.Query({ text: 'SELECT $1::text AS v, 2 AS n', values: ['kept by the caller'] });
    const answered = once(query, 'end');
    client.query(query);
    const [result] = (await answered) as [pg.QueryResult];
    expect(result.rows).toEqual([{ v: 'kept by the caller', n: 2 }]);
    await new Promise((resolve) => setImmediate(resolve));
    const fields = query as unknown as QueryFields;
    expect([fields.callback, fields.values, fields._result, fields._results]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('still answer promise calls and named prepared statements, pipelined on one connection', async () => {
    const answers = await Promise.all(
      [1, 2, 3].map((i) => client.query({ name: 'finished_q', text: 'SELECT $1::int * 10 AS x', values: [i] })),
    );
    expect(answers.map((a) => a.rows[0].x)).toEqual([10, 20, 30]);
    await expect(client.query('SELECT 1/0')).rejects.toThrow(/division by zero/);
    expect((await client.query('SELECT 7 AS y')).rows).toEqual([{ y: 7 }]);
  });
});
