import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM_PATH = '/usr/bin/chromium';

export type ChromiumAvailability = { ok: true; path: string } | { ok: false; reason: string };

let cached: ChromiumAvailability | null = null;

/**
 * Debian's chromium, installed with apt when it is missing: playwright's own browser download
 * cannot run here, and CI machines start without a browser. Installation is attempted once per
 * process; when it fails the caller skips its browser tests with `reason`.
 */
export function ensureChromium(): ChromiumAvailability {
  if (cached) return cached;
  cached = existsSync(CHROMIUM_PATH) ? { ok: true, path: CHROMIUM_PATH } : install();
  return cached;
}

function install(): ChromiumAvailability {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['update'], { env, stdio: 'pipe', timeout: 300_000 });
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { env, stdio: 'pipe', timeout: 600_000 });
  } catch (err) {
    const e = err as { message?: string; stderr?: Buffer };
    const detail = (e.stderr?.toString('utf8') || e.message || String(err)).trim().split('\n').slice(-3).join(' ');
    return { ok: false, reason: `chromium is not installed at ${CHROMIUM_PATH} and 'apt-get install chromium' failed: ${detail}` };
  }
  return existsSync(CHROMIUM_PATH)
    ? { ok: true, path: CHROMIUM_PATH }
    : { ok: false, reason: `'apt-get install chromium' finished but ${CHROMIUM_PATH} does not exist` };
}
