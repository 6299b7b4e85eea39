import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const SRC = join(__dirname, '..');

function files(dir: string, suffix: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? files(path, suffix) : e.name.endsWith(suffix) ? [path] : [];
  });
}

const rel = (path: string) => relative(SRC, path).split('\\').join('/');

/** Where each relative import of a file leads, as a path under src/ (`..` first when it leaves src/). */
function importsOf(path: string): string[] {
  return [...readFileSync(path, 'utf8').matchAll(/(?:from\s+|import\(|require\()'(\.{1,2}\/[^']*)'/g)].map((m) => rel(join(dirname(path), m[1])));
}

/** The identifiers of a module file's `exports: [...]`. */
function exportsOf(source: string): string[] {
  const list = /exports:\s*\[([^\]]*)\]/.exec(source)?.[1] ?? '';
  return list.split(',').map((s) => s.trim()).filter(Boolean);
}

describe('module boundaries', () => {
  it('no module exports a repository: other modules reach its tables through its services', () => {
    const offenders = files(SRC, '.module.ts').flatMap((path) =>
      exportsOf(readFileSync(path, 'utf8'))
        .filter((name) => name.endsWith('Repository'))
        .map((name) => `${rel(path)} exports ${name}`),
    );
    expect(offenders).toEqual([]);
  });

  it('outside PAM, code imports PamModule, not its sub-modules, and never a PAM repository', () => {
    const offenders = files(SRC, '.ts')
      .filter((path) => !rel(path).startsWith('modules/pam/') && !path.endsWith('.spec.ts'))
      .flatMap((path) =>
        [...readFileSync(path, 'utf8').matchAll(/from '([^']*\/pam\/[^']*)'/g)]
          .map((m) => m[1])
          .filter((spec) => /\.repository$/.test(spec) || (/\.module$/.test(spec) && !/\/pam\/pam\.module$/.test(spec)))
          .map((spec) => `${rel(path)} imports ${spec}`),
      );
    expect(offenders).toEqual([]);
  });

  /**
   * The layers, top to bottom: the commands and main.ts, bootstrap.ts, app.module.ts, seed/, the
   * feature modules, common/, infra/. A lower layer that needs something of a higher one declares a
   * port (an abstract class in common/, such as PrincipalSource or PrincipalCache) that the higher
   * one provides.
   */
  it('infra/ imports only infra/, and common/ only common/ and infra/: neither reaches a feature module, the seed or the start-up', () => {
    const below: Record<string, string[]> = { 'infra/': ['infra/'], 'common/': ['common/', 'infra/'] };
    const offenders = Object.entries(below).flatMap(([layer, allowed]) =>
      files(join(SRC, layer), '.ts').flatMap((path) =>
        importsOf(path)
          .filter((target) => !target.startsWith('../') && !allowed.some((a) => target.startsWith(a)))
          .map((target) => `${rel(path)} imports ${target}`),
      ),
    );
    expect(offenders).toEqual([]);
  });

  it('tenancy imports nothing of auth, which sits above it: changed callers are forgotten through PrincipalCache', () => {
    const offenders = files(join(SRC, 'modules/tenancy'), '.ts').flatMap((path) =>
      importsOf(path)
        .filter((target) => target.startsWith('modules/auth/'))
        .map((target) => `${rel(path)} imports ${target}`),
    );
    expect(offenders).toEqual([]);
  });
});
