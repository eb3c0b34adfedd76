import type { Command } from 'commander';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import {
  createOperator,
  disableOperator,
  enableOperator,
  listOperators,
  MIN_PASSWORD_LENGTH,
} from '../modules/console/operators.service.js';
import { io, withContext } from './cli-context.js';

/**
 * The `operators` group: `operators create|list|disable|enable` (CONS-1, AUTH-9). Without --password, create asks
 * for one on a terminal (empty answer: generate) and otherwise generates one; a generated password is printed once.
 */
export function registerOperatorsCommands(program: Command): void {
  const operators = program.command('operators').description('Console operator accounts');
  operators
    .command('create')
    .requiredOption('--email <email>', 'sign-in e-mail address')
    .requiredOption('--name <name>', 'display name (shown in status history)')
    .option(
      '--password <password>',
      `password (at least ${MIN_PASSWORD_LENGTH} characters); omit to be asked or to generate one`,
    )
    .option('--json', 'print JSON')
    .description('Create an operator account for the console')
    .action(async (opts) => {
      const password = opts.password ?? (process.stdin.isTTY && !opts.json ? await askPassword() : undefined);
      await withContext(async ({ ctx }) => {
        const { operator, generatedPassword } = await createOperator(ctx.pool, {
          email: opts.email,
          name: opts.name,
          password,
        });
        const out = generatedPassword ? { ...operator, password: generatedPassword } : operator;
        io(opts).print(out, () =>
          [
            `Created operator ${operator.id} (${operator.name} <${operator.email}>)`,
            ...(generatedPassword ? [`  password: ${generatedPassword}`, 'The password is shown only once.'] : []),
            `Sign in at ${ctx.config.consoleBaseUrl}/login`,
          ].join('\n'),
        );
      });
    });

  operators
    .command('list')
    .option('--json', 'print JSON')
    .description('List operator accounts')
    .action((opts) =>
      withContext(async ({ ctx }) => {
        const rows = await listOperators(ctx.pool);
        io(opts).print(rows, () =>
          rows.length
            ? rows
                .map(
                  (o) =>
                    `${o.id}  ${o.email.padEnd(32)} ${o.name.padEnd(24)} ${o.disabledAt ? `disabled ${o.disabledAt}` : 'active'}`,
                )
                .join('\n')
            : 'No operators yet: npm run cli -- operators create --email you@example.com --name "Your Name"',
        );
      }),
    );

  operators
    .command('disable')
    .argument('<operator>', 'operator id (op_…) or e-mail')
    .option('--json', 'print JSON')
    .description('Disable an operator and sign out all of its sessions')
    .action((operator: string, opts) =>
      withContext(async ({ ctx }) => {
        const o = await disableOperator(ctx.pool, operator);
        io(opts).print(o, () => `Disabled ${o.id} (${o.email}); its sessions are signed out.`);
      }),
    );

  operators
    .command('enable')
    .argument('<operator>', 'operator id (op_…) or e-mail')
    .option('--json', 'print JSON')
    .description('Re-enable a disabled operator')
    .action((operator: string, opts) =>
      withContext(async ({ ctx }) => {
        const o = await enableOperator(ctx.pool, operator);
        io(opts).print(o, () => `Enabled ${o.id} (${o.email}).`);
      }),
    );
}

// Reads a password from the terminal without echoing it; an empty answer means "generate one".
async function askPassword(): Promise<string | undefined> {
  const first = await readHidden(`Password (at least ${MIN_PASSWORD_LENGTH} characters; empty to generate): `);
  if (!first) return undefined;
  const again = await readHidden('Repeat the password: ');
  if (first !== again) throw new Error('The passwords do not match');
  return first;
}

function readHidden(prompt: string): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk, _enc, cb) {
      if (!muted) process.stdout.write(chunk);
      cb();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  return new Promise((resolve) => {
    rl.question(prompt, (answer) => {
      rl.close();
      process.stdout.write('\n');
      resolve(answer);
    });
    muted = true;
  });
}
