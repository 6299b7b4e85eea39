#!/usr/bin/env node
/**
 * `npm start` runs this first (prestart): it builds `dist` with `npm run build` only when a source
 * changed since the last build, and says what it does. A fresh clone builds once (about 35 s of
 * type checking, with a progress line); every later start of unchanged sources starts at once.
 *
 * The last build's start time is kept in dist/.build-stamp.json; sources are everything the build
 * reads (src, bench, the TypeScript, Nest and package files, the metadata generator). A source
 * saved during a build is newer than the stamp, so the next start builds again. Where there are
 * no sources (the Docker image ships dist only), an existing dist is used as it is.
 *
 *   node scripts/build-if-stale.js           build (npm run build) when stale
 *   node scripts/build-if-stale.js --check   exit 0 when dist is up to date, 1 when it is not
 *   node scripts/build-if-stale.js --always  `npm run build` itself: nest build, with progress, and the stamp
 *   node scripts/build-if-stale.js --quiet   as the first, silent when there is nothing to build (the one-off
 *                                            commands: migrate, seed, bootstrap, simulator, bench)
 */
'use strict';
const { spawn } = require('node:child_process');
const { existsSync, readdirSync, readFileSync, statSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const root = join(__dirname, '..');
const DIST_ENTRY = join(root, 'dist/src/main.js');
const STAMP = join(root, 'dist/.build-stamp.json');
const SOURCE_DIRS = ['src', 'bench'];
const SOURCE_FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'nest-cli.json', 'ormconfig.ts', 'scripts/generate-openapi-metadata.js'];
/** Written by the build itself (prebuild regenerates it from the DTOs), so never a reason to build. */
const GENERATED = new Set(['src/metadata.ts']);

/** The newest source: { path, mtimeMs }, or null when there is no source at all. */
function newestSource() {
  let newest = null;
  const consider = (path) => {
    const rel = relative(root, path);
    if (GENERATED.has(rel)) return;
    const { mtimeMs } = statSync(path);
    if (!newest || mtimeMs > newest.mtimeMs) newest = { path: rel, mtimeMs };
  };
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) consider(path);
    }
  };
  for (const dir of SOURCE_DIRS) if (existsSync(join(root, dir))) walk(join(root, dir));
  for (const file of SOURCE_FILES) if (existsSync(join(root, file))) consider(join(root, file));
  return newest;
}

/** Why dist must be built, or null when it is up to date. */
function staleReason() {
  if (!existsSync(DIST_ENTRY)) return 'dist/src/main.js does not exist';
  // Without src there is nothing to build from (the image): package.json and the lockfile alone never make dist stale.
  if (!existsSync(join(root, 'src'))) return null;
  const newest = newestSource();
  if (!newest) return null;
  let startedAt;
  try {
    startedAt = JSON.parse(readFileSync(STAMP, 'utf8')).startedAt;
  } catch {
    return 'dist was not built by this script (no dist/.build-stamp.json)';
  }
  if (typeof startedAt !== 'number' || newest.mtimeMs >= startedAt) return `${newest.path} changed since the last build`;
  return null;
}

/** `nest build` (after prebuild generated the OpenAPI metadata), a progress line every 10 s, then the stamp. */
function nestBuild() {
  const startedAt = Date.now();
  const nest = join(root, 'node_modules/.bin', process.platform === 'win32' ? 'nest.cmd' : 'nest');
  const child = spawn(nest, ['build'], { cwd: root, stdio: 'inherit' });
  const tick = setInterval(() => process.stdout.write(`  building: type checking and compiling (${Math.round((Date.now() - startedAt) / 1000)} s)\n`), 10_000);
  child.on('exit', (code, signal) => {
    clearInterval(tick);
    if (code !== 0) {
      process.stderr.write(`nest build failed (${signal ?? `exit code ${code}`}).\n`);
      process.exit(code || 1);
    }
    writeFileSync(STAMP, JSON.stringify({ startedAt }) + '\n');
    process.stdout.write(`Built dist in ${Math.round((Date.now() - startedAt) / 1000)} s.\n`);
  });
}

if (process.argv.includes('--always')) {
  nestBuild();
} else {
  const reason = staleReason();
  if (process.argv.includes('--check')) {
    process.stdout.write(reason ? `dist is stale: ${reason}\n` : 'dist is up to date\n');
    process.exit(reason ? 1 : 0);
  } else if (reason) {
    process.stdout.write(`Building dist (about 35 s): ${reason}.\n`);
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    spawn(npm, ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' }).on('exit', (code) => process.exit(code ?? 1));
  } else if (!process.argv.includes('--quiet')) {
    process.stdout.write('dist is up to date with the sources: starting without a build (npm run build rebuilds).\n');
  }
}
