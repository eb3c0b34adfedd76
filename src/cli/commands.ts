import type { Command } from 'commander';
import { registerOrganizationCommands } from './organizations.cli.js';

/** Every CLI command group; each module adds its registrar here. */
export const cliCommands: Array<(program: Command) => void> = [registerOrganizationCommands];
