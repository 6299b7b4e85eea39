/**
 * ts-jest, with each file's output also kept in node_modules/.cache/ts-jest-shared for every
 * project of the run. Jest keeps its transform cache per project, and its key holds the whole
 * project configuration, so unit, integration, e2e, browser, e2e-pgbouncer, scale-out and fault
 * each transpiled the application again, in every worker that met it cold: about 12 s of CPU each
 * time on 2 cores. The output does not depend on the project (the same compiler options, each file
 * transpiled alone: isolatedModules), so it is kept under the hash of what it depends on: the
 * ts-jest and TypeScript versions, the transformer's options and the parsed compiler options, the
 * root directory, the coverage and ESM flags, the file's path and its text. Without isolatedModules
 * (the output of a file would then depend on the types of others) or with TS_JEST_HOOKS set, this
 * stays out of the way and ts-jest runs as it is. Jest's own cache works as before; entries are
 * written under a temporary name and renamed, so workers never read half of one.
 */
const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { join, resolve } = require('node:path');
const ts = require('typescript');
const tsJest = require('ts-jest').default;
const TS_JEST_VERSION = require('ts-jest/package.json').version;

const CACHE_DIR = join(__dirname, '../../node_modules/.cache/ts-jest-shared');

function compilerOptions(rootDir, tsconfig) {
  const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined };
  return ts.getParsedCommandLineOfConfigFile(resolve(rootDir, tsconfig), {}, host)?.options;
}

exports.createTransformer = function createTransformer(transformerConfig = {}) {
  const inner = tsJest.createTransformer(transformerConfig);
  const salts = new Map();
  /** The part of the key every file of a root directory shares; null when the output may depend on more than the file. */
  const salt = (rootDir) => {
    if (!salts.has(rootDir)) {
      const options = compilerOptions(rootDir, transformerConfig.tsconfig ?? 'tsconfig.json');
      salts.set(rootDir, options?.isolatedModules ? JSON.stringify([TS_JEST_VERSION, ts.version, transformerConfig, options, rootDir]) : null);
    }
    return salts.get(rootDir);
  };
  const entry = (source, path, options) => {
    const shared = process.env.TS_JEST_HOOKS ? null : salt(options.config.rootDir);
    if (shared === null) return null;
    const flags = `instrument:${Boolean(options.instrument)} esm:${Boolean(options.supportsStaticESM)}`;
    const key = createHash('sha256').update(shared).update('\0').update(flags).update('\0').update(path).update('\0').update(source).digest('hex');
    return join(CACHE_DIR, `${key}.json`);
  };
  const read = (file) => {
    try {
      return JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      return null;
    }
  };
  const keep = (file, result) => {
    mkdirSync(CACHE_DIR, { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(result));
    renameSync(temporary, file);
  };
  return {
    canInstrument: inner.canInstrument,
    getCacheKey: inner.getCacheKey,
    getCacheKeyAsync: inner.getCacheKeyAsync,
    process(source, path, options) {
      const file = entry(source, path, options);
      const kept = file && read(file);
      if (kept) return kept;
      const result = inner.process(source, path, options);
      if (file) keep(file, result);
      return result;
    },
    async processAsync(source, path, options) {
      const file = entry(source, path, options);
      const kept = file && read(file);
      if (kept) return kept;
      const result = await inner.processAsync(source, path, options);
      if (file) keep(file, result);
      return result;
    },
  };
};
