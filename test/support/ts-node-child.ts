import { join } from 'node:path';

/**
 * The node flags that run a TypeScript source in a child process: ts-node's transpile-only
 * register, with each file's output kept on disk between processes (ts-node-cached.js).
 */
export const TS_NODE_FLAGS = ['-r', join(__dirname, 'ts-node-cached.js')];
