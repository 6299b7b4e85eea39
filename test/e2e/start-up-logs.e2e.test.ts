import { Logger } from '@nestjs/common';
import { startTestApp } from '../support/test-app';

/**
 * Issue 15 item 4: a start an operator can read. Nest warned on every start that the request
 * logger's route pattern (`*`, the legacy wildcard) was unsupported and converted it.
 */
describe('starting the service', () => {
  it('logs no warning and no error, so no route pattern needs converting', async () => {
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const failed = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const t = await startTestApp({}, { listen: true });
      await t.close();
      // The tier-drift check reports rules other test files left drifted in the shared database:
      // data, not the start itself.
      const aboutData = (args: unknown[]) => args.some((a) => typeof a === 'string' && a.startsWith('[pam-rule-tier-drift]'));
      expect(warned.mock.calls.filter((args) => !aboutData(args))).toEqual([]);
      expect(failed.mock.calls.filter((args) => !aboutData(args))).toEqual([]);
    } finally {
      warned.mockRestore();
      failed.mockRestore();
    }
  });
});
