import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/*
 * No import cycles under src/, of any kind: static imports, type-only imports, re-exports (`export … from`) and
 * dynamic `import()` of relative paths all count. A cycle makes module load order decide what is initialised
 * (a value can be `undefined` at import time), and type-only cycles are where runtime ones start. The graph is
 * read with the TypeScript compiler's own import scanner (`ts.preProcessFile`, typescript is already installed),
 * and NodeNext specifiers (`./x.js`) are resolved to their `.ts` sources as tsc resolves them; no graph library is
 * needed for that, and none has to read this project's `.js`-suffixed imports right.
 */

const SRC = path.resolve('src');

/** Every .ts file under `dir`, absolute, sorted. */
function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...tsFiles(full));
    else if (/\.(ts|mts|cts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out.sort();
}

/** The file a relative specifier names (`./x.js` is `./x.ts` under NodeNext), or null when it is not a source file. */
function resolveRelative(from: string, specifier: string): string | null {
  const base = path.resolve(path.dirname(from), specifier);
  const stem = base.replace(/\.(js|mjs|cjs|ts|mts|cts)$/, '');
  const candidates = [base, `${stem}.ts`, `${stem}.mts`, `${stem}.cts`, path.join(base, 'index.ts')];
  for (const c of candidates) if (/\.(ts|mts|cts)$/.test(c) && fs.existsSync(c) && fs.statSync(c).isFile()) return c;
  return null;
}

/** The relative imports of one file (every kind `ts.preProcessFile` reports: import, import type, export from, import()). */
function relativeImports(file: string): string[] {
  const info = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
  return info.importedFiles.map((f) => f.fileName).filter((name) => name.startsWith('.'));
}

/** The import graph of `files`: each file to the source files it imports, in source order, without duplicates. */
function importGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets: string[] = [];
    for (const specifier of relativeImports(file)) {
      const target = resolveRelative(file, specifier);
      if (target && !targets.includes(target)) targets.push(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/**
 * The cycles of `graph`, one per strongly connected component of more than one file (or a file importing
 * itself), each as a path that starts and ends at the same file. Tarjan's algorithm, iterative.
 */
function findCycles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    const work: Array<{ node: string; next: number }> = [{ node: root, next: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length) {
      const frame = work[work.length - 1]!;
      const edges = graph.get(frame.node) ?? [];
      if (frame.next < edges.length) {
        const to = edges[frame.next++]!;
        if (!graph.has(to)) continue;
        if (!index.has(to)) {
          index.set(to, counter);
          low.set(to, counter++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, next: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        const selfLoop = component.length === 1 && (graph.get(component[0]!) ?? []).includes(component[0]!);
        if (component.length > 1 || selfLoop) components.push(component);
      }
    }
  }
  return components.map((component) => cycleWithin(graph, new Set(component)));
}

/** One concrete cycle inside a strongly connected component: a shortest path from its first file back to itself. */
function cycleWithin(graph: Map<string, string[]>, members: Set<string>): string[] {
  const start = [...members].sort()[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const node = queue.shift()!;
    for (const to of graph.get(node) ?? []) {
      if (!members.has(to)) continue;
      if (to === start) {
        const cycle = [start];
        for (let at = node; at !== start; at = previous.get(at)!) cycle.unshift(at);
        cycle.unshift(start);
        return cycle;
      }
      if (!previous.has(to)) {
        previous.set(to, node);
        queue.push(to);
      }
    }
  }
  return [start, start];
}

/*
 * Domain modules form layers too: folder A may import folder B only if B never imports A, directly or through other
 * folders, so each module can be read, tested and changed from the ones below it (events, notifications and branding
 * at the bottom; dashboard and console, the browser parts, at the top). The file graph is collapsed to one node per
 * folder of src/modules/ and checked for cycles the same way.
 */
const MODULES = path.join(SRC, 'modules');

/** The graph of domain folders: folder name to the other folders its files import (files outside it ignored). */
function moduleGraph(fileGraph: Map<string, string[]>, modulesDir: string): Map<string, string[]> {
  const folderOf = (file: string) => {
    const rel = path.relative(modulesDir, file);
    return rel.startsWith('..') ? null : rel.split(path.sep)[0]!;
  };
  const graph = new Map<string, string[]>();
  for (const [file, targets] of fileGraph) {
    const from = folderOf(file);
    if (!from) continue;
    const edges = graph.get(from) ?? [];
    for (const target of targets) {
      const to = folderOf(target);
      if (to && to !== from && !edges.includes(to)) edges.push(to);
    }
    graph.set(from, edges);
  }
  return graph;
}

/*
 * API-5, money at the edge: integer cents inside, dollars only where an answer is built. `centsToDollars` may be
 * imported only by lib/money.ts itself, the presenters (`*.views.ts`), route files (`*.routes.ts`, `*-routes.ts`)
 * and the CLI (src/cli/), which is an edge of its own. Named imports, namespace imports that use it, and
 * re-exports of it all count.
 */
const MONEY = path.join(SRC, 'lib', 'money.ts');

/** Whether `file` is allowed to convert cents to dollars (API-5). */
function isMoneyEdge(file: string, root: string): boolean {
  const rel = path.relative(root, file).split(path.sep).join('/');
  return rel === 'lib/money.ts' || rel.startsWith('cli/') || /\.views\.ts$/.test(rel) || /[.-]routes\.ts$/.test(rel);
}

/** The files among `files` that import `centsToDollars` from `moneyFile` (named, namespace or re-exported). */
function centsToDollarsImporters(files: string[], moneyFile: string): string[] {
  const out: string[] = [];
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
    const uses = source.statements.some((st) => {
      if (!(ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) || !st.moduleSpecifier) return false;
      if (!ts.isStringLiteral(st.moduleSpecifier) || !st.moduleSpecifier.text.startsWith('.')) return false;
      if (resolveRelative(file, st.moduleSpecifier.text) !== moneyFile) return false;
      if (ts.isExportDeclaration(st)) {
        const clause = st.exportClause;
        return (
          !clause ||
          (ts.isNamedExports(clause) &&
            clause.elements.some((e) => (e.propertyName ?? e.name).text === 'centsToDollars'))
        );
      }
      const bindings = st.importClause?.namedBindings;
      if (!bindings) return false;
      if (ts.isNamespaceImport(bindings)) return new RegExp(`\\b${bindings.name.text}\\.centsToDollars\\b`).test(text);
      return bindings.elements.some((e) => (e.propertyName ?? e.name).text === 'centsToDollars');
    });
    if (uses) out.push(file);
  }
  return out;
}

const show = (cycle: string[]): string => cycle.map((f) => path.relative(process.cwd(), f)).join(' -> ');

describe('architecture', () => {
  it('finds a cycle when there is one (the check can fail)', () => {
    const graph = new Map<string, string[]>([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
    ]);
    expect(findCycles(graph)).toEqual([
      ['a.ts', 'b.ts', 'c.ts', 'a.ts'],
      ['e.ts', 'e.ts'],
    ]);
    expect(
      findCycles(
        new Map([
          ['a.ts', ['b.ts']],
          ['b.ts', []],
        ]),
      ),
    ).toEqual([]);
  });

  it('sees type-only imports, re-exports and dynamic import() of relative paths', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'architecture-'));
    try {
      fs.writeFileSync(path.join(dir, 'a.ts'), "import type { B } from './b.js';\nexport type A = B;\n");
      fs.writeFileSync(path.join(dir, 'b.ts'), "export * from './c.js';\nexport type B = string;\n");
      fs.writeFileSync(path.join(dir, 'c.ts'), "export async function load() { return import('./a.js'); }\n");
      const cycles = findCycles(importGraph(tsFiles(dir)));
      expect(cycles.map((c) => c.map((f) => path.basename(f)))).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('src/ has no import cycles (static, type-only, re-export or dynamic)', () => {
    const files = tsFiles(SRC);
    expect(files.length).toBeGreaterThan(50);
    const cycles = findCycles(importGraph(files)).map(show);
    expect(cycles, `import cycles under src/:\n${cycles.join('\n')}`).toEqual([]);
  });

  it('finds a cycle between domain folders when one imports a folder that imports it back', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'modules-'));
    try {
      for (const folder of ['orders', 'filings', 'events']) fs.mkdirSync(path.join(dir, folder));
      fs.writeFileSync(path.join(dir, 'orders', 'a.ts'), "import { e } from '../events/e.js';\nexport const a = e;\n");
      fs.writeFileSync(
        path.join(dir, 'orders', 'b.ts'),
        "import type { F } from '../filings/f.js';\nexport type B = F;\n",
      );
      fs.writeFileSync(
        path.join(dir, 'filings', 'f.ts'),
        "import { a } from '../orders/a.js';\nexport type F = typeof a;\n",
      );
      fs.writeFileSync(path.join(dir, 'events', 'e.ts'), 'export const e = 1;\n');
      // No file cycle (b -> f -> a -> e), but the folders orders and filings import each other.
      expect(findCycles(importGraph(tsFiles(dir)))).toEqual([]);
      expect(findCycles(moduleGraph(importGraph(tsFiles(dir)), dir))).toEqual([['filings', 'orders', 'filings']]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('src/modules/ folders import one another in one direction only (layers, no cycle)', () => {
    const graph = moduleGraph(importGraph(tsFiles(SRC)), MODULES);
    expect(graph.size).toBeGreaterThan(15);
    const cycles = findCycles(graph).map((c) => c.join(' -> '));
    expect(cycles, `cycles between domain folders:\n${cycles.join('\n')}`).toEqual([]);
  });

  it('finds a centsToDollars import outside the edge (the money check can fail)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'architecture-'));
    try {
      for (const sub of ['lib', 'cli', 'modules']) fs.mkdirSync(path.join(dir, sub));
      const money = path.join(dir, 'lib', 'money.ts');
      fs.writeFileSync(money, 'export const centsToDollars = (c: number) => c / 100;\n');
      const write = (rel: string, text: string) => fs.writeFileSync(path.join(dir, rel), text);
      write(
        'modules/a.service.ts',
        "import { centsToDollars } from '../lib/money.js';\nexport const a = centsToDollars(1);\n",
      );
      write('modules/b.ts', "import * as money from '../lib/money.js';\nexport const b = money.centsToDollars(1);\n");
      write('modules/c.ts', "export { centsToDollars as toDollars } from '../lib/money.js';\n");
      write(
        'modules/d.views.ts',
        "import { centsToDollars } from '../lib/money.js';\nexport const d = centsToDollars(1);\n",
      );
      write(
        'modules/e.admin-routes.ts',
        "import { centsToDollars } from '../lib/money.js';\nexport const e = centsToDollars(1);\n",
      );
      write('cli/f.cli.ts', "import { centsToDollars } from '../lib/money.js';\nexport const f = centsToDollars(1);\n");
      write('modules/g.ts', "import { formatCents } from '../lib/money.js';\nexport const g = formatCents;\n");
      const found = centsToDollarsImporters(tsFiles(dir), money).filter((f) => !isMoneyEdge(f, dir));
      expect(found.map((f) => path.relative(dir, f).split(path.sep).join('/'))).toEqual([
        'modules/a.service.ts',
        'modules/b.ts',
        'modules/c.ts',
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('src/ converts cents to dollars only at the edge: presenters, routes and the CLI (API-5)', () => {
    const importers = centsToDollarsImporters(tsFiles(SRC), MONEY);
    expect(importers.length).toBeGreaterThan(0);
    const outside = importers.filter((f) => !isMoneyEdge(f, SRC)).map((f) => path.relative(process.cwd(), f));
    expect(outside, `centsToDollars imported outside the API edge (API-5):\n${outside.join('\n')}`).toEqual([]);
  });
});
