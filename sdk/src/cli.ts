import { Command, InvalidArgumentError, Option } from 'commander';
import { EVENT_TYPES } from './generated/operations.js';
import { listen } from './listen.js';

/*
 * `filing-compliance`: the SDK's command line. `listen` forwards the account's events to a local URL, signed like
 * webhooks, so a receiver on a laptop gets them without a public address.
 */

// Every type the service streams, from the generated document: a type added to the API is accepted after regenerating.
const TYPES: readonly string[] = EVENT_TYPES;

function eventList(value: string): string[] {
  const list = value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  const unknown = list.filter((t) => !TYPES.includes(t));
  if (!list.length || unknown.length)
    throw new InvalidArgumentError(`expected event types separated by commas, from: ${TYPES.join(', ')}`);
  return list;
}

function httpUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value;
  } catch {
    // reported below
  }
  throw new InvalidArgumentError('expected an http(s) URL, e.g. http://localhost:4000/webhooks');
}

function apiKey(value: string): string {
  if (!/^sk_(live|test)_/.test(value))
    throw new InvalidArgumentError('expected an API key starting with sk_live_ or sk_test_');
  return value;
}

function signingSecret(value: string): string {
  if (!/^whsec_[A-Za-z0-9_-]{16,}$/.test(value))
    throw new InvalidArgumentError('expected a whsec_ secret (whsec_ and at least 16 letters, digits, _ or -)');
  return value;
}

/** The program (exported for tests); `run` parses process.argv. */
export function program(): Command {
  const cli = new Command('filing-compliance').description('Filing Compliance Service command line').version('1.6.0');
  cli
    .command('listen')
    .description(
      "Forward your account's events to a local URL as signed webhooks (prints the signing secret to verify them with)",
    )
    .addOption(
      new Option('--api-key <key>', 'sk_test_… or sk_live_… key')
        .env('FILING_COMPLIANCE_API_KEY')
        .argParser(apiKey)
        .makeOptionMandatory(),
    )
    .addOption(
      new Option('--forward-to <url>', 'local URL that receives each event as a POST')
        .argParser(httpUrl)
        .makeOptionMandatory(),
    )
    .addOption(
      new Option('--events <types>', `only these event types, comma-separated (${TYPES.join(', ')})`).argParser(
        eventList,
      ),
    )
    .addOption(
      new Option('--base-url <url>', "API base address of the key's environment (default: the SDK's)")
        .env('FILING_COMPLIANCE_BASE_URL')
        .argParser(httpUrl),
    )
    .addOption(
      new Option('--secret <whsec>', 'sign with this whsec_ secret instead of a new one').argParser(signingSecret),
    )
    .action(
      async (opts: { apiKey: string; forwardTo: string; events?: string[]; baseUrl?: string; secret?: string }) => {
        const stop = new AbortController();
        for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
        const { done } = listen({ ...opts, signal: stop.signal });
        await done;
      },
    );
  return cli;
}

/** Runs the command line with process.argv; exits 1 with the message on an error retrying cannot fix. */
export async function run(argv: string[] = process.argv): Promise<void> {
  try {
    await program().parseAsync(argv);
  } catch (err) {
    console.error(`Error: ${(err as Error).message}`);
    process.exitCode = 1;
  }
}
