import type { Command } from 'commander';
import { registerBillingCommands } from './billing.cli.js';
import { registerOrganizationCommands } from './organizations.cli.js';
import { registerFilingCommands } from './filings.cli.js';
import { registerOperatorCommands } from './console-operators.cli.js';
import { registerConsoleOrgCommands } from './console-orgs.cli.js';
import { registerConsoleExtraCommands } from './console-extra.cli.js';
import { registerSubscriptionCommands } from './subscriptions.cli.js';
import { registerLedgerCommands } from './ledger.cli.js';
import { registerComplianceCommands } from './compliance.cli.js';
import { registerSecretsCommands } from './secrets.cli.js';

/** Every CLI command group; each module adds its registrar here. */
export const cliCommands: Array<(program: Command) => void> = [registerOrganizationCommands, registerBillingCommands, registerFilingCommands, registerSubscriptionCommands, registerLedgerCommands, registerComplianceCommands, registerSecretsCommands,
  // Last: they add to groups (org, webhooks) that other registrars may create first.
  registerOperatorCommands, registerConsoleOrgCommands, registerConsoleExtraCommands];
