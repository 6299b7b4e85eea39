import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..');

function files(dir: string, suffix: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? files(path, suffix) : e.name.endsWith(suffix) ? [path] : [];
  });
}

/** The repositories no file of the medium tier imports (paths under src/, without `.ts`). */
export function untested(repositories: string[], mediumSources: string[]): string[] {
  return repositories.filter((repo) => !mediumSources.some((source) => source.includes(`/${repo}'`)));
}

describe('the medium tier', () => {
  it('finds a repository that no medium test imports, and none that one does', () => {
    const tests = [`import { A } from '../../../src/modules/a/a.repository';`, `import { B } from '../../../src/modules/b/b.repository.extra';`];
    expect(untested(['src/modules/a/a.repository', 'src/modules/b/b.repository'], tests)).toEqual(['src/modules/b/b.repository']);
  });

  it('has a test for every repository: each one is imported by a file under test/integration', () => {
    const repositories = files(join(ROOT, 'src'), '.repository.ts').map((p) => relative(ROOT, p).split('\\').join('/').replace(/\.ts$/, ''));
    const medium = files(join(ROOT, 'test', 'integration'), '.ts').map((p) => readFileSync(p, 'utf8'));
    expect(repositories.length).toBeGreaterThan(50);
    expect(untested(repositories, medium)).toEqual([]);
  });
});
