/**
 * Jest's order, except that the files known to take longest start first when jest has no timing of
 * its own for them (a clean clone, as in CI). Jest orders by the durations of the last run and,
 * without one, by file size: the longest files are small (a table drives the authorization matrix,
 * child processes do the work of the start and shutdown files), so they started at random points,
 * and one starting near the end kept the run going on one worker while the others had finished.
 * Longest first (measured alone on 2 cores, 25 to 70 s each), the short files fill in behind them.
 * Once a run has recorded timings, jest's own order holds for those files.
 */
const { relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const LONGEST = [
  'test/e2e/security/authorization-matrix.e2e.test.ts',
  'test/browser/login.test.ts',
  'test/fault/database.fault.test.ts',
  'test/e2e/shutdown/npm-start-signals.e2e.test.ts',
  'test/scale-out/jobs-schedule.test.ts',
  'test/scale-out/jobs-import-takeover.test.ts',
  'test/e2e/cli/start-failures.e2e.test.ts',
  'test/e2e/bad-input/openapi-campaign.e2e.test.ts',
  'test/e2e/shutdown/oidc-sign-in-drain.e2e.test.ts',
  'test/e2e/shutdown/graceful-shutdown.e2e.test.ts',
  'test/e2e/cli/demo-tenant-in-production.e2e.test.ts',
  'test/e2e/security/authorization-matrix-targets.e2e.test.ts',
  'test/scale-out/sso-across-instances.test.ts',
];

class LongestFirstSequencer extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const rank = (test) => (this.time(test) === undefined ? LONGEST.indexOf(relative(test.context.config.rootDir, test.path)) : -1);
    const first = sorted.filter((test) => rank(test) >= 0).sort((a, b) => rank(a) - rank(b));
    return [...first, ...sorted.filter((test) => rank(test) < 0)];
  }
}

module.exports = LongestFirstSequencer;
