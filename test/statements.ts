import pg from 'pg';

/**
 * Runs `work` and returns the statements every pg client of this process sent meanwhile, with its result. The rate
 * limiter's counters (synced by a timer, whatever the requests) are left out.
 */
export async function statementsDuring<T>(work: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const original = pg.Client.prototype.query;
  const statements: string[] = [];
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const q = args[0] as string | { text: string };
    const text = typeof q === 'string' ? q : q?.text;
    if (!/rate_limit_counters/.test(text)) statements.push(text);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    return { result: await work(), statements };
  } finally {
    pg.Client.prototype.query = original;
  }
}
