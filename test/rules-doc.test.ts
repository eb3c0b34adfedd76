import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * docs/rules.md is the catalogue code comments and tests cite by id, and each rule's "Enforced:" line says where the
 * rule lives. This file keeps the catalogue true to the code: every id is unique, every file an "Enforced:" line
 * names exists, and every code name it cites (a backticked identifier such as `claimKey`, `SharedCounters.peek`,
 * `new_id(prefix)`, `*_append_only`) occurs in the file it is cited with. A failure lists every missing name with
 * its rule id, so a rename or a removal is fixed in the catalogue in the same change.
 *
 * How a name is attributed, within one clause of the line (clauses are separated by `;` outside parentheses):
 * - after a backticked file: that file must contain the name (`src/lib/ids.ts` `newId`);
 * - before any file of its clause: one of the clause's files must contain it (`orders_group_fkey` (`migrations/…`));
 * - in a clause without files: some file under src/, or under the other top folders the rule cites (migrations/,
 *   sdk/, scripts/, test/, bench/), must contain it.
 * Backticked text that is neither a path nor an identifier (`GET /auth/:token`, `FOR UPDATE`, `requestIdHeader:
 * false`) is prose about the code and is not looked up. A path without a folder (`balance.service.ts`,
 * `094.do.generic-plans-for-placement.sql`) is found by its name; `*` and `<group>` in a path match any name part.
 */

const ROOT = path.resolve('.');
const RULES = path.join(ROOT, 'docs/rules.md');
/** The folders a rule may cite, and the repository's own top files (package.json …). */
const CITABLE_DIRS = ['src', 'migrations', 'sdk', 'scripts', 'test', 'bench', 'docs', 'data'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.data', 'generated']);
/** Words that name an HTTP method of a route, not something in the code (ORD-10: "no `GET` route"). */
const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Every file under the citable folders and at the top, as repository-relative paths with `/`. */
function repositoryFiles(): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(ROOT, rel), { withFileTypes: true })) {
      if (SKIPPED_DIRS.has(entry.name)) continue;
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(child);
      else out.push(child);
    }
  };
  for (const dir of CITABLE_DIRS) walk(dir);
  for (const entry of fs.readdirSync(ROOT, { withFileTypes: true })) if (entry.isFile()) out.push(entry.name);
  return out.sort();
}

/** A regular expression for a cited path: `*` and `<placeholder>` match within one path part. */
function pathPattern(cited: string): RegExp {
  const source = cited
    .split(/(\*|<[^>]+>)/)
    .map((part) => (part === '*' || /^<[^>]+>$/.test(part) ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  // A path without a folder is a file's own name, wherever it is.
  return cited.includes('/') ? new RegExp(`^${source}$`) : new RegExp(`(^|/)${source}$`);
}

/**
 * A backticked span that is a path: a file in a folder (`src/a/b.ts`, `src/x/y.css`), a file name with a source
 * extension (`balance.service.ts`, `*.repo.ts`; `SharedCounters.peek` is a name, not a file) or a folder (`src/cli/`).
 */
function isPath(span: string): boolean {
  return (
    /^[\w.*<>-]+(\/[\w.*<>-]+)+\.[a-z]+$/.test(span) ||
    /^[\w.*<>-]+\.(ts|mts|js|mjs|sql|eta|css|json|md|yaml)$/.test(span) ||
    /^[\w.-]+(\/[\w.-]+)*\/$/.test(span)
  );
}

/** The identifier a span names (`new_id(prefix)` is `new_id`, `reply.status(…)` is `reply.status`), or null for prose. */
function nameOf(span: string): string | null {
  const bare = span.replace(/\(.*\)$/s, '');
  if (!/^[A-Za-z_*][\w*]*(\.[A-Za-z_][\w]*)*$/.test(bare)) return null;
  if (!/[A-Za-z]/.test(bare) || HTTP_METHODS.has(bare)) return null;
  return bare;
}

/** Whether `text` holds every part of a (possibly dotted, possibly `*`-wildcarded) name as a whole word. */
function mentions(text: string, name: string): boolean {
  return name.split('.').every((part) => {
    const source = part
      .split('*')
      .map((piece) => piece.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('\\w*');
    return new RegExp(`(?<![\\w$])${source}(?![\\w$])`).test(text);
  });
}

/** Splits an "Enforced:" text into clauses at `;` outside parentheses. */
function clauses(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let inTicks = false;
  let current = '';
  for (const ch of text) {
    if (ch === '`') inTicks = !inTicks;
    else if (!inTicks && ch === '(') depth++;
    else if (!inTicks && ch === ')') depth = Math.max(0, depth - 1);
    if (ch === ';' && depth === 0 && !inTicks) {
      out.push(current);
      current = '';
    } else current += ch;
  }
  out.push(current);
  return out;
}

interface Rule {
  id: string;
  line: number;
  enforced: string | null;
}

/** The rules of docs/rules.md: each `### ID · title` heading and its "Enforced:" text (continuation lines joined). */
function readRules(markdown: string): Rule[] {
  const rules: Rule[] = [];
  let fenced = false;
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced) continue;
    const heading = /^### ([A-Z]+(?:-[A-Z]+)*-\d+) ·/.exec(line);
    if (heading) rules.push({ id: heading[1]!, line: i + 1, enforced: null });
    const rule = rules[rules.length - 1];
    if (rule && line.startsWith('- Enforced:')) {
      let text = line.slice('- Enforced:'.length);
      while (i + 1 < lines.length && /^\s+\S/.test(lines[i + 1]!)) text += ` ${lines[++i]!.trim()}`;
      rule.enforced = text;
    }
  }
  return rules;
}

/** The problems of one rule's "Enforced:" text, each as `ID: what is missing`. */
function enforcedProblems(rule: Rule, files: string[], read: (file: string) => string): string[] {
  const problems: string[] = [];
  const text = rule.enforced ?? '';
  const resolve = (cited: string) => {
    const pattern = pathPattern(cited);
    return cited.endsWith('/') ? files.filter((f) => f.startsWith(cited)) : files.filter((f) => pattern.test(f));
  };
  const spansOf = (clause: string) => [...clause.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  // The top folders the rule cites: names in clauses without a file are looked for there (and always in src/).
  const cited = spansOf(text).filter(isPath).flatMap(resolve);
  const scopeDirs = new Set(['src', ...cited.map((f) => (f.includes('/') ? f.split('/')[0]! : '')).filter(Boolean)]);
  const scope = files.filter((f) => scopeDirs.has(f.split('/')[0]!) && /\.(ts|mts|js|mjs|sql|eta|json)$/.test(f));

  for (const clause of clauses(text)) {
    const spans = spansOf(clause);
    const clauseFiles = spans.filter(isPath).flatMap(resolve);
    let current: string[] | null = null;
    for (const span of spans) {
      if (isPath(span)) {
        const found = resolve(span);
        if (found.length === 0) problems.push(`${rule.id}: file \`${span}\` does not exist`);
        // Names after a missing file cannot be checked: the missing file is the problem reported.
        current = found;
        continue;
      }
      const name = nameOf(span);
      if (!name) continue;
      const where = current ?? (clauseFiles.length ? clauseFiles : scope);
      if (where.length === 0 || where.some((f) => mentions(read(f), name))) continue;
      const place = current
        ? current.join(', ')
        : clauseFiles.length
          ? clauseFiles.join(', ')
          : [...scopeDirs].join('/, ');
      problems.push(`${rule.id}: \`${span}\` is not in ${place}${current || clauseFiles.length ? '' : '/'}`);
    }
  }
  return problems;
}

const markdown = fs.readFileSync(RULES, 'utf8');
const rules = readRules(markdown);

describe('docs/rules.md', () => {
  it('gives each rule an id of its own', () => {
    const seen = new Map<string, number>();
    const duplicates: string[] = [];
    for (const rule of rules) {
      const first = seen.get(rule.id);
      if (first !== undefined) duplicates.push(`${rule.id} at lines ${first} and ${rule.line}`);
      else seen.set(rule.id, rule.line);
    }
    expect(rules.length).toBeGreaterThan(200);
    expect(duplicates).toEqual([]);
  });

  it('names in every "Enforced:" line only files and code names that exist where it says', () => {
    const files = repositoryFiles();
    const cache = new Map<string, string>();
    const read = (file: string) => {
      let text = cache.get(file);
      if (text === undefined) {
        text = fs.readFileSync(path.join(ROOT, file), 'utf8');
        cache.set(file, text);
      }
      return text;
    };
    const problems = rules.flatMap((rule) => enforcedProblems(rule, files, read));
    expect(rules.filter((r) => r.enforced).length).toBeGreaterThan(200);
    expect(problems, `docs/rules.md names what does not exist:\n${problems.join('\n')}`).toEqual([]);
  });
});

describe('the "Enforced:" check itself', () => {
  const files = ['src/a/one.ts', 'src/a/two.repo.ts', 'migrations/001.do.x.sql', 'src/cli/orders.cli.ts'];
  const texts: Record<string, string> = {
    'src/a/one.ts': 'export function present() {}\nclass Box { peek() {} }',
    'src/a/two.repo.ts': 'const QUERY = 1;',
    'migrations/001.do.x.sql': 'CREATE FUNCTION new_id(prefix text); CREATE TRIGGER payments_append_only',
    'src/cli/orders.cli.ts': '',
  };
  const check = (enforced: string) => enforcedProblems({ id: 'X-1', line: 1, enforced }, files, (f) => texts[f] ?? '');

  it('passes names found in the file they are cited with, by short name, glob or placeholder', () => {
    expect(
      check(
        ' `src/a/one.ts` `present`, `Box.peek`; `two.repo.ts` (`QUERY`); `new_id(prefix)`, `*_append_only` ' +
          '(`migrations/001.do.x.sql`); `src/cli/<group>.cli.ts`; `src/*/*.repo.ts`; (no `GET` route, `FOR UPDATE`).',
      ),
    ).toEqual([]);
  });

  it('lists every missing file and every name not in its file, with the rule id', () => {
    expect(check(' `src/a/gone.ts` `x`; `src/a/one.ts` `ensureFunds`, `Box.debit`; `QUERY` (`src/a/one.ts`).')).toEqual(
      [
        'X-1: file `src/a/gone.ts` does not exist',
        'X-1: `ensureFunds` is not in src/a/one.ts',
        'X-1: `Box.debit` is not in src/a/one.ts',
        'X-1: `QUERY` is not in src/a/one.ts',
      ],
    );
  });

  it('looks a name of a clause without files up in src/ and the folders the rule cites', () => {
    expect(check(' constraint `present`; trigger `nowhere`; `migrations/001.do.x.sql`.')).toEqual([
      'X-1: `nowhere` is not in src/, migrations/',
    ]);
  });
});
