import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withFileLock } from '../../../src/infra/fs/file-lock';

export type PackageAvailability = { ok: true } | { ok: false; reason: string };

function onPath(command: string): boolean {
  return (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(':').some((dir) => dir && existsSync(join(dir, command)));
}

/**
 * A Debian package's program, installed with apt when it is missing, as the PgBouncer tiers
 * install pgbouncer (test/support/pgbouncer.ts): only a machine without apt (or without root or
 * passwordless sudo) gets `ok: false` with the reason, and the caller skips with it; where apt
 * exists and the installation fails, this throws, so the failure is seen. One apt at a time
 * across the test workers (a lock file).
 */
export function ensureDebianPackage(pkg: string, binary: string): PackageAvailability {
  if (existsSync(binary)) return { ok: true };
  const asRoot = process.getuid?.() === 0 ? [] : onPath('sudo') ? ['sudo', '-n', 'env', 'DEBIAN_FRONTEND=noninteractive'] : null;
  if (!onPath('apt-get') || asRoot === null) {
    const why = onPath('apt-get') ? 'apt-get needs root and sudo is unavailable' : 'apt-get is unavailable on this machine';
    return { ok: false, reason: `${pkg} is not installed at ${binary} and ${why}, so this fault test cannot run here` };
  }
  const apt = (args: string[], timeout: number) => {
    const [command, ...rest] = [...asRoot, 'apt-get', ...args];
    execFileSync(command, rest, { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, stdio: 'pipe', timeout });
  };
  withFileLock(
    join(tmpdir(), 'rmm-test-apt-install.lock'),
    { waitMs: 900_000, staleMs: 900_000, pollMs: 250, timeout: (lock) => new Error(`waited 15 minutes for ${lock}`) },
    () => {
      if (existsSync(binary)) return;
      try {
        apt(['update'], 300_000);
        apt(['install', '-y', '--no-install-recommends', pkg], 600_000);
      } catch (err) {
        const e = err as { message?: string; stderr?: Buffer };
        const detail = (e.stderr?.toString('utf8') || e.message || String(err)).trim().split('\n').slice(-3).join(' ');
        throw new Error(`${pkg} is not installed at ${binary} and 'apt-get install ${pkg}' failed: ${detail}`);
      }
    },
  );
  if (!existsSync(binary)) throw new Error(`'apt-get install ${pkg}' finished but ${binary} does not exist`);
  return { ok: true };
}
