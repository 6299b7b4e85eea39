import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_NODE_FLAGS } from './node-flags';

const root = join(__dirname, '..', '..', '..');

describe('the service node flags', () => {
  it('are the flags npm start runs the service with', () => {
    const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start;
    // `exec`: the shell npm starts becomes the service, so a signal sent to npm start reaches it (docs/operations.md).
    expect(start).toBe(['exec', 'node', ...SERVICE_NODE_FLAGS, 'dist/src/main.js'].join(' '));
  });

  it('are the flags the Docker image runs the service with', () => {
    const cmd = readFileSync(join(root, 'Dockerfile'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('CMD '));
    expect(cmd).toEqual([`CMD ${JSON.stringify(['node', ...SERVICE_NODE_FLAGS, 'dist/src/main.js'])}`]);
  });
});
