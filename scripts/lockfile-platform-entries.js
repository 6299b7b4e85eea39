/**
 * The npm registry reachable from our machines does not serve other platforms' optional native
 * binaries (e.g. @unrs/resolver-binding-darwin-arm64), so `npm install` cannot record them and
 * `npm ci` then rejects the lockfile as out of sync. This adds a lock entry for each such
 * optional dependency, marked with its os/cpu so npm skips it on every other platform and never
 * fetches it. Run after changing dependencies: `node scripts/lockfile-platform-entries.js`.
 */
const { readFileSync, writeFileSync } = require('node:fs');
const { resolve } = require('node:path');

const file = resolve(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(readFileSync(file, 'utf8'));
const OS = ['android', 'darwin', 'freebsd', 'win32', 'openharmony', 'linux', 'netbsd', 'openbsd', 'sunos', 'aix'];
const CPU = { x64: 'x64', ia32: 'ia32', arm64: 'arm64', arm: 'arm', loong64: 'loong64', ppc64: 'ppc64', riscv64: 'riscv64', s390x: 's390x' };

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.map((p) => CPU[p]).find(Boolean);
  const libc = parts.includes('musl') || parts.includes('musleabihf') ? 'musl' : parts.includes('gnu') || parts.includes('gnueabihf') ? 'glibc' : null;
  return { os, cpu, libc };
}

let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = path ? `${path}/node_modules/` : 'node_modules/';
    if (lock.packages[`${base}${dep}`] || lock.packages[`node_modules/${dep}`]) continue;
    const { os, cpu, libc } = platformOf(dep);
    if (!os) continue;
    lock.packages[`node_modules/${dep}`] = {
      version: version.replace(/^[\^~]/, ''),
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      os: [os],
      ...(cpu ? { cpu: [cpu] } : {}),
      ...(libc ? { libc: [libc] } : {}),
    };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
writeFileSync(file, JSON.stringify(lock, null, 2) + '\n');
console.log(`added ${added} platform-specific optional entries`);
