import { Command, InvalidArgumentError, Option } from 'commander';
import { EVENT_TYPES } from './generated/operations.js';
import { listen } from './listen.js';
import { promptHidden } from './prompt.js';

/*
 * `filing-compliance`: the SDK's command line. `listen` forwards the account's events to a local URL, signed like
 * webhooks, so a receiver on a laptop gets them without a public address. The API key never comes from the command
 * line, where other users see it (`ps`) and the shell keeps it (history): it is read from the environment or typed at
 * a prompt that does not show it (AUTH-13).
 */

/** The environment variable `listen` reads the API key from. */
const API_KEY_VARIABLE = 'FILING_COMPLIANCE_API_KEY';

const HOW_TO_GIVE_THE_KEY = `set ${API_KEY_VARIABLE} in the environment (e.g. read -rs ${API_KEY_VARIABLE} && export ${API_KEY_VARIABLE}), or run the command in a terminal and type the key at its prompt`;

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

/**
 * The API key of `listen`: from API_KEY_VARIABLE, else typed at a prompt that does not show it when stdin is a
 * terminal. @throws Error saying how to give the key when there is none, or when it is not an sk_live_/sk_test_ key
 * (the value is not repeated).
 */
async function readApiKey(): Promise<string> {
  const fromEnvironment = process.env[API_KEY_VARIABLE];
  const key =
    fromEnvironment ||
    (process.stdin.isTTY ? (await promptHidden('API key (sk_test_… or sk_live_…, not shown): ')).trim() : '');
  if (!key) throw new Error(`No API key: ${HOW_TO_GIVE_THE_KEY}`);
  if (!/^sk_(live|test)_/.test(key))
    throw new Error(
      `${fromEnvironment ? API_KEY_VARIABLE : 'The key typed'} is not an API key: keys start with sk_live_ or sk_test_`,
    );
  return key;
}

function signingSecret(value: string): string {
  if (!/^whsec_[A-Za-z0-9_-]{16,}$/.test(value))
    throw new InvalidArgumentError('expected a whsec_ secret (whsec_ and at least 16 letters, digits, _ or -)');
  return value;
}

/** The program (exported for tests); `run` parses process.argv. */
function program(): Command {
  const cli = new Command('filing-compliance').description('Filing Compliance Service command line').version('1.6.0');
  cli
    .command('listen')
    .description(
      "Forward your account's events to a local URL as signed webhooks (prints the signing secret to verify them with)",
    )
    // Declared only to be refused with the way to give a key (an unknown option's error would not say it).
    .addOption(new Option('--api-key <key>').hideHelp())
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
    .addHelpText('after', `\nThe API key: ${HOW_TO_GIVE_THE_KEY}. It is never taken from the command line.`)
    .action(
      async (opts: { apiKey?: string; forwardTo: string; events?: string[]; baseUrl?: string; secret?: string }) => {
        if (opts.apiKey !== undefined)
          throw new Error(
            `--api-key is refused: a key on the command line is visible to other users (ps) and kept in the shell history. Instead, ${HOW_TO_GIVE_THE_KEY}. Consider the key exposed if others can see this machine's processes or your history.`,
          );
        const apiKey = await readApiKey();
        const stop = new AbortController();
        for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
        const { done } = listen({ ...opts, apiKey, signal: stop.signal });
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
