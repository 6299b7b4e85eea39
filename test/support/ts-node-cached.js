/**
 * `node -r <this file> src/…ts`: what `-r ts-node/register/transpile-only` does (the same
 * compiler options, the same transpilation, ts-node's source maps in stack traces, no type check,
 * so a type error in a file being edited elsewhere does not stop a child process), with each
 * file's JavaScript kept on disk by the hash of its text. The child processes the tests start
 * (the service, instances, CLI commands) load the same ~500 files: transpiling them took about
 * 11 s of CPU per process on 2 cores, reading them back takes well under one.
 */
require('ts-node').register({ transpileOnly: true, transpiler: require.resolve('./ts-transpile-cache.js') });
