import { Command } from 'commander';
import { registerBalanceCommands } from './balance.cli.js';
import { registerComplianceCommands } from './compliance.cli.js';
import { registerDbCommands } from './db.cli.js';
import { registerDocumentsCommands } from './documents.cli.js';
import { registerFeesCommands } from './fees.cli.js';
import { registerKeysCommands } from './keys.cli.js';
import { registerLedgerCommands } from './ledger.cli.js';
import { registerOperatorsCommands } from './operators.cli.js';
import { registerOrdersCommands } from './orders.cli.js';
import { registerOrgCommands } from './org.cli.js';
import { registerPricesCommands } from './prices.cli.js';
import { registerSecretsCommands } from './secrets.cli.js';
import { registerSubscriptionsCommands } from './subscriptions.cli.js';
import { registerWebhooksCommands } from './webhooks.cli.js';

/**
 * Adds one command group to the program. Each `<group>.cli.ts` file has exactly one: it creates the group named
 * after the file with all of its commands, and touches no other group, so the groups can be registered in any order
 * (commander refuses a second group of the same name).
 */
export type CommandGroup = (program: Command) => void;

/** Every CLI command group, in the order `cli --help` lists them (CONS-6). */
export const commandGroups: readonly CommandGroup[] = [
  registerDbCommands,
  registerOrgCommands,
  registerKeysCommands,
  registerBalanceCommands,
  registerPricesCommands,
  registerFeesCommands,
  registerOrdersCommands,
  registerSubscriptionsCommands,
  registerLedgerCommands,
  registerComplianceCommands,
  registerSecretsCommands,
  registerOperatorsCommands,
  registerWebhooksCommands,
  registerDocumentsCommands,
];

/** The operator CLI's command tree: the program with every group of `groups` (default: {@link commandGroups}) added. */
export function buildCli(groups: readonly CommandGroup[] = commandGroups): Command {
  const program = new Command('cli').description('Filing Compliance Service operator CLI').showHelpAfterError();
  for (const register of groups) register(program);
  return program;
}
