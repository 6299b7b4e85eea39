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
      expect(warned.mock.calls).toEqual([]);
      expect(failed.mock.calls).toEqual([]);
    } finally {
      warned.mockRestore();
      failed.mockRestore();
    }
  });
});
