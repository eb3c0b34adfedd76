import { loadCli } from './cli/commands.js';
import { AppError } from './lib/errors.js';
import { knownStartupProblem } from './lib/startup-error.js';
import { scrubSecrets } from './lib/logger.js';

/** The operator CLI: `npm run cli -- <command>`. Every console action has a command here (CONS-6). */
loadCli(process.argv)
  .then((program) => program.parseAsync(process.argv))
  .catch((err) => {
    const startup = knownStartupProblem(err, { databaseUrl: process.env.DATABASE_URL });
    const message =
      err instanceof AppError
        ? `${err.message} (${err.code})`
        : (startup ?? (err instanceof Error ? err.message : String(err)));
    process.stderr.write(`Error: ${scrubSecrets(message)}\n`);
    process.exit(1);
  });
