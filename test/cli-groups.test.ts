import fs from 'node:fs';
import path from 'node:path';
import { Command, type Option } from 'commander';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildCli, commandGroups, loadCli, type CommandGroup, type CommandGroupModule } from '../src/cli/commands.js';

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

// Every group, loaded, in the order of `commandGroups`.
const groups: readonly CommandGroup[] = await Promise.all(commandGroups.map((m) => m.load()));

describe('CLI command groups (CONS-6)', () => {
  it('one file per group: each <group>.cli.ts adds exactly the group it is named after, and every file is registered', async () => {
    const registered = new Set<CommandGroup>(groups);
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
      buildCli(groups)
        .commands.map((c) => c.name())
        .sort(),
    ).toEqual(names.sort());
    // The organizations group answers to `orgs` as well as `org`.
    expect(
      buildCli(groups)
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
    const expected = tree(groups);
    fc.assert(
      fc.property(
        fc.shuffledSubarray([...groups], { minLength: groups.length, maxLength: groups.length }),
        (shuffled) => {
          expect(tree(shuffled)).toEqual(expected);
        },
      ),
      { numRuns: 40 },
    );
    expect(tree([...groups].reverse())).toEqual(expected);
  });

  it('a group registered twice is refused rather than merged', () => {
    expect(() => buildCli([...groups, groups[0]!])).toThrow(/cannot add command/);
  });

  it('each entry of commandGroups answers to the name and aliases of the group it loads', () => {
    for (const [i, m] of commandGroups.entries()) {
      const program = new Command('cli');
      groups[i]!(program);
      const group = program.commands[0]!;
      expect(m.names, group.name()).toEqual([group.name(), ...group.aliases()]);
    }
  });

  it('a command loads only its own group, with the same commands, help and options; help and unknown commands load every group', async () => {
    const loaded: string[] = [];
    const counted: CommandGroupModule[] = commandGroups.map((m) => ({
      names: m.names,
      load: () => {
        loaded.push(m.names[0]!);
        return m.load();
      },
    }));
    const full = tree(groups);
    for (const m of commandGroups) {
      for (const name of m.names) {
        loaded.length = 0;
        const program = await loadCli(['node', 'cli.ts', name, 'anything', '--json'], counted);
        expect(loaded).toEqual([m.names[0]]);
        expect(program.commands.map((c) => shape(c))).toEqual([full.groups[m.names[0]!]]);
        expect(shape(program).showHelpAfterError).toEqual(full.program.showHelpAfterError);
      }
    }
    for (const args of [[], ['--help'], ['help', 'orders'], ['order', 'list'], ['-h']]) {
      loaded.length = 0;
      const program = await loadCli(['node', 'cli.ts', ...args], counted);
      expect(loaded, args.join(' ')).toEqual(commandGroups.map((m) => m.names[0]));
      expect(program.helpInformation()).toBe(buildCli(groups).helpInformation());
    }
  });
});
