import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const SRC = join(__dirname, '..');

function files(dir: string, suffix: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? files(path, suffix) : e.name.endsWith(suffix) ? [path] : [];
  });
}

const rel = (path: string) => relative(SRC, path).split('\\').join('/');

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
});
