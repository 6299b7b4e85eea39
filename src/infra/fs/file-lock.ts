import { closeSync, openSync, rmSync, statSync } from 'node:fs';

export interface FileLockOptions {
  /** How long to wait for another holder before giving up. */
  waitMs: number;
  /** A lock older than this was left by a crashed process and is taken over. */
  staleMs: number;
  /** How long to sleep between attempts. */
  pollMs: number;
  /** The error thrown when the wait runs out. */
  timeout: (lock: string) => Error;
}

/**
 * Runs fn while holding `lock` (a file created exclusively), so processes that start together
 * do one thing once: generate a development secret, install a package. Synchronous on purpose:
 * its callers run before anything asynchronous exists (configuration loading) or must not
 * interleave.
 */
export function withFileLock<T>(lock: string, options: FileLockOptions, fn: () => T): T {
  const deadline = Date.now() + options.waitMs;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx', 0o600));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > options.staleMs) rmSync(lock, { force: true });
      else if (Date.now() > deadline) throw options.timeout(lock);
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, options.pollMs);
    }
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { force: true });
  }
}
