import { Command } from 'commander';

/**
 * Adds one command group to the program. Each `<group>.cli.ts` file has exactly one: it creates the group named
 * after the file with all of its commands, and touches no other group, so the groups can be registered in any order
 * (commander refuses a second group of the same name).
 */
export type CommandGroup = (program: Command) => void;

/**
 * One `<group>.cli.ts` file, not yet loaded: the names its group answers to (the group's name first, then its
 * aliases) and how to load its {@link CommandGroup}. A command loads only its own group's file and what that file
 * imports, not every module of the service (test/cli-groups.test.ts checks the names against the loaded groups).
 */
export interface CommandGroupModule {
  names: readonly string[];
  load(): Promise<CommandGroup>;
}

/** Every CLI command group, in the order `cli --help` lists them (CONS-6). */
export const commandGroups: readonly CommandGroupModule[] = [
  { names: ['db'], load: async () => (await import('./db.cli.js')).registerDbCommands },
  { names: ['org', 'orgs'], load: async () => (await import('./org.cli.js')).registerOrgCommands },
  { names: ['keys'], load: async () => (await import('./keys.cli.js')).registerKeysCommands },
  { names: ['balance'], load: async () => (await import('./balance.cli.js')).registerBalanceCommands },
  { names: ['prices'], load: async () => (await import('./prices.cli.js')).registerPricesCommands },
  { names: ['fees'], load: async () => (await import('./fees.cli.js')).registerFeesCommands },
  { names: ['orders'], load: async () => (await import('./orders.cli.js')).registerOrdersCommands },
  {
    names: ['subscriptions'],
    load: async () => (await import('./subscriptions.cli.js')).registerSubscriptionsCommands,
  },
  { names: ['ledger'], load: async () => (await import('./ledger.cli.js')).registerLedgerCommands },
  { names: ['compliance'], load: async () => (await import('./compliance.cli.js')).registerComplianceCommands },
  { names: ['secrets'], load: async () => (await import('./secrets.cli.js')).registerSecretsCommands },
  { names: ['operators'], load: async () => (await import('./operators.cli.js')).registerOperatorsCommands },
  { names: ['webhooks'], load: async () => (await import('./webhooks.cli.js')).registerWebhooksCommands },
  { names: ['documents'], load: async () => (await import('./documents.cli.js')).registerDocumentsCommands },
];

/** The operator CLI's command tree: the program with every group of `groups` added, in that order. */
export function buildCli(groups: readonly CommandGroup[]): Command {
  const program = new Command('cli').description('Filing Compliance Service operator CLI').showHelpAfterError();
  for (const register of groups) register(program);
  return program;
}

/**
 * The command tree that parses `argv` (`process.argv`: node, script, then the arguments): only the group named by
 * the first argument when it names one of `modules` (default: {@link commandGroups}), else every group (`--help`,
 * `help …`, no argument, an unknown command: the listing and commander's suggestions need them all). What a command
 * prints and does is the same either way; it only loads less.
 */
export async function loadCli(
  argv: readonly string[],
  modules: readonly CommandGroupModule[] = commandGroups,
): Promise<Command> {
  const first = argv[2];
  const own = modules.find((m) => first !== undefined && m.names.includes(first));
  return buildCli(await Promise.all((own ? [own] : modules).map((m) => m.load())));
}
