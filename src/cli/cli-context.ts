import { boot, type Booted } from '../boot.js';
import { loadConfig } from '../config.js';
import type { Environment } from '../context.js';

/** Output helpers shared by CLI commands: `--json` prints machine-readable JSON, otherwise text lines. */
export interface CliIo {
  json: boolean;
  print(value: unknown, text: () => string): void;
}

/** Builds the io for a command from its options. */
export function io(opts: { json?: boolean }): CliIo {
  return {
    json: Boolean(opts.json),
    print(value, text) {
      process.stdout.write(`${opts.json ? JSON.stringify(value, null, 2) : text()}\n`);
    },
  };
}

/**
 * Commander parser of `--environment <env>`: returns 'live' or 'test' unchanged.
 * @throws Error naming the option and the value for anything else (commander then stops with the message).
 */
export function envOption(value: string): Environment {
  if (value !== 'live' && value !== 'test') throw new Error(`--environment must be live or test (got '${value}')`);
  return value;
}

/**
 * Commander parser of a dollar amount (`--amount`, `--wholesale`, fee options): the number.
 * @throws Error naming the value when it is empty or not a number (commander then stops with the message).
 */
export function dollarsOption(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new Error(`'${value}' is not a dollar amount`);
  return n;
}

/**
 * The value of an option that may also be given as the command's argument (`keys revoke key_…` or `--key key_…`).
 * @throws Error naming the option when neither was given.
 */
export function requiredValue(value: string | undefined, option: string): string {
  if (!value) throw new Error(`${option} is required (or give it as the argument)`);
  return value;
}

/**
 * Runs a CLI action with a booted context (same configuration and database as the server; the embedded
 * database is shared when `npm start` is running). Closes everything afterwards.
 */
export async function withContext<T>(
  action: (booted: Booted) => Promise<T>,
  options: { migrate?: boolean } = {},
): Promise<T> {
  const config = loadConfig();
  const booted = await boot({ ...config, logLevel: process.env.LOG_LEVEL ?? 'warn' }, options);
  try {
    return await action(booted);
  } finally {
    await booted.close();
  }
}
