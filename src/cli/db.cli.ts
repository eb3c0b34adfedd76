import type { Command } from 'commander';
import { prepareDatabase, seed } from '../boot.js';
import { io, withContext } from './cli-context.js';

/** The `db` group: `db migrate` applies pending migrations and seeds the reference data. */
export function registerDbCommands(program: Command): void {
  const db = program.command('db').description('Database');
  db.command('migrate')
    .option('--json', 'print JSON')
    .description('Apply pending migrations and seed reference data')
    .action((opts) =>
      withContext(
        async ({ ctx, embedded }) => {
          await prepareDatabase(ctx.config.databaseUrl ?? embedded!.url);
          await seed(ctx.pool);
          io(opts).print({ ok: true }, () => 'Database is up to date.');
        },
        { migrate: false },
      ),
    );
}
