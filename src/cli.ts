import { Command } from 'commander';
import { prepareDatabase, seed } from './boot.js';
import { withContext, io } from './cli/cli-context.js';
import { cliCommands } from './cli/commands.js';
import { AppError } from './lib/errors.js';
import { knownStartupProblem } from './lib/startup-error.js';
import { scrubSecrets } from './lib/logger.js';

/** The operator CLI: `npm run cli -- <command>`. Every console action has a command here. */
const program = new Command('cli').description('Filing Compliance Service operator CLI').showHelpAfterError();

const db = program.command('db').description('Database');
db.command('migrate')
  .option('--json', 'print JSON')
  .description('Apply pending migrations and seed reference data')
  .action((opts) => withContext(async ({ ctx, embedded }) => {
    await prepareDatabase(ctx.config.databaseUrl ?? embedded!.url);
    await seed(ctx.pool);
    io(opts).print({ ok: true }, () => 'Database is up to date.');
  }, { migrate: false }));

for (const register of cliCommands) register(program);

program.parseAsync(process.argv).catch((err) => {
  const startup = knownStartupProblem(err, { databaseUrl: process.env.DATABASE_URL });
  const message = err instanceof AppError ? `${err.message} (${err.code})` : startup ?? (err instanceof Error ? err.message : String(err));
  process.stderr.write(`Error: ${scrubSecrets(message)}\n`);
  process.exit(1);
});
