/**
 * A ts-node transpiler (its `transpiler` option; ts-node-cached.js installs it) that transpiles
 * as ts-node's transpile-only mode does, with TypeScript's transpileModule and the project's
 * compiler options (for `module: commonjs` the output is byte for byte ts-node's own), and keeps
 * each result in node_modules/.cache/ts-node-transpile under the hash of everything the output
 * depends on: the TypeScript version, the compiler options, the file's path and its text. A file
 * whose transpilation reports a diagnostic is not kept (ts-node reports it, as without the cache).
 * Entries are written under a temporary name and renamed, so processes loading the same file at
 * once never read half an entry.
 */
const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const ts = require('typescript');

const CACHE_DIR = join(__dirname, '../../node_modules/.cache/ts-node-transpile');

exports.create = function create({ service, nodeModuleEmitKind }) {
  const compilerOptions = service.config.options;
  const salt = JSON.stringify([ts.version, compilerOptions]);
  mkdirSync(CACHE_DIR, { recursive: true });
  return {
    transpile(code, { fileName }) {
      // ts-node asks for these emits only under `module: node16` or `nodenext`, which transpileModule alone does not reproduce.
      if (nodeModuleEmitKind) throw new Error(`${__filename} emits CommonJS only (tsconfig "module": "commonjs"), not ${nodeModuleEmitKind} for ${fileName}`);
      const key = createHash('sha256').update(salt).update('\0').update(fileName).update('\0').update(code).digest('hex');
      const path = join(CACHE_DIR, `${key}.json`);
      try {
        return JSON.parse(readFileSync(path, 'utf8'));
      } catch {
        // Not kept yet: transpiled below.
      }
      const result = ts.transpileModule(code, { fileName, compilerOptions, reportDiagnostics: true });
      if (!result.diagnostics?.length) {
        const temporary = `${path}.${process.pid}.tmp`;
        writeFileSync(temporary, JSON.stringify({ outputText: result.outputText, sourceMapText: result.sourceMapText }));
        renameSync(temporary, path);
      }
      return result;
    },
  };
};
