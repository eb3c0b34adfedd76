import fs from 'node:fs';
import path from 'node:path';
import { Command, type Option } from 'commander';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildCli, commandGroups, type CommandGroup } from '../src/cli/commands.js';

// Everything a user of a command sees or relies on: its help text, arguments, options (with their defaults and
// whether a parser checks them), settings it inherits, and its subcommands in their help order.
interface CommandShape {
  name: string;
  help: string;
  args: Array<{ name: string; required: boolean; variadic: boolean }>;
  options: Array<{ flags: string; mandatory: boolean; defaultValue: unknown; parsed: boolean }>;
  hasAction: boolean;
  showHelpAfterError: unknown;
  commands: CommandShape[];
}

function shape(command: Command): CommandShape {
  const internals = command as unknown as { _actionHandler: unknown; _showHelpAfterError: unknown };
  return {
    name: command.name(),
    help: command.helpInformation(),
    args: command.registeredArguments.map((a) => ({ name: a.name(), required: a.required, variadic: a.variadic })),
    options: command.options.map((o: Option) => ({
      flags: o.flags,
      mandatory: o.mandatory,
      defaultValue: o.defaultValue,
      parsed: Boolean(o.parseArg),
    })),
    hasAction: Boolean(internals._actionHandler),
    showHelpAfterError: internals._showHelpAfterError,
    commands: command.commands.map(shape),
  };
}

// The program's tree with its groups keyed by name: the one thing registration order may change is the order
// in which `cli --help` lists the groups.
function tree(groups: readonly CommandGroup[]) {
  const { commands, help: _listing, ...program } = shape(buildCli(groups));
  return { program, groups: Object.fromEntries(commands.map((c) => [c.name, c])) };
}

const cliDir = path.resolve('src/cli');
const groupFiles = fs
  .readdirSync(cliDir)
  .filter((f) => f.endsWith('.cli.ts'))
  .sort();

describe('CLI command groups (CONS-6)', () => {
  it('one file per group: each <group>.cli.ts adds exactly the group it is named after, and every file is registered', async () => {
    const registered = new Set<CommandGroup>(commandGroups);
    const names: string[] = [];
    for (const file of groupFiles) {
      const exports = Object.values(await import(path.join(cliDir, file))).filter(
        (v): v is CommandGroup => typeof v === 'function',
      );
      expect(exports, file).toHaveLength(1);
      expect(registered.has(exports[0]!), `${file} is in commandGroups`).toBe(true);
      const program = new Command('cli');
      exports[0]!(program);
      expect(
        program.commands.map((c) => c.name()),
        file,
      ).toEqual([file.replace(/\.cli\.ts$/, '')]);
      names.push(program.commands[0]!.name());
    }
    expect(commandGroups).toHaveLength(groupFiles.length);
    expect(
      buildCli()
        .commands.map((c) => c.name())
        .sort(),
    ).toEqual(names.sort());
    // The organizations group answers to `orgs` as well as `org`.
    expect(
      buildCli()
        .commands.find((c) => c.name() === 'org')
        ?.aliases(),
    ).toEqual(['orgs']);
    expect(names).toEqual(
      expect.arrayContaining([
        'org',
        'keys',
        'orders',
        'prices',
        'fees',
        'balance',
        'webhooks',
        'operators',
        'subscriptions',
      ]),
    );
  });

  it('registered in any order, the groups build the same command tree', () => {
    const expected = tree(commandGroups);
    fc.assert(
      fc.property(
        fc.shuffledSubarray([...commandGroups], { minLength: commandGroups.length, maxLength: commandGroups.length }),
        (shuffled) => {
          expect(tree(shuffled)).toEqual(expected);
        },
      ),
      { numRuns: 40 },
    );
    expect(tree([...commandGroups].reverse())).toEqual(expected);
  });

  it('a group registered twice is refused rather than merged', () => {
    expect(() => buildCli([...commandGroups, commandGroups[0]!])).toThrow(/cannot add command/);
  });
});
