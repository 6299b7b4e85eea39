/**
 * One `npm test` runs every tier. Integration, e2e and browser tests share one
 * uniquely named database created by the global setup and dropped at the end.
 */
// Type checking is done once by `tsc` in pretest; ts-jest only transpiles, each file once for every
// project of the run (test/support/ts-jest-shared-cache.js).
const tsJest = ['<rootDir>/test/support/ts-jest-shared-cache.js', { tsconfig: 'tsconfig.jest.json', diagnostics: false }];
const common = {
  transform: { '^.+\\.ts$': tsJest },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testEnvironment: 'node',
};
/**
 * Each file of these tiers gets a PgBouncer of its own in front of the run's database, and the
 * request role's URL points at it (test/support/pgbouncer.environment.ts, pgbouncer.setup.ts).
 */
const pooled = {
  ...common,
  rootDir: '.',
  testEnvironment: '<rootDir>/test/support/pgbouncer.environment.ts',
  setupFiles: ['<rootDir>/test/support/env.ts'],
  setupFilesAfterEnv: ['<rootDir>/test/support/pgbouncer.setup.ts'],
};
/**
 * Existing e2e suites that also run with the request role behind the pooler, as part of `npm test`:
 * the paths that pooling can break (hot statements, concurrent transactions, jobs, sign-in state).
 * Not mobile-approvals: its push tests script the gateway's next answers, and its twin in the e2e
 * project, running at the same time on the same database, would queue pushes its worker claims.
 * PGBOUNCER_ALL_E2E=true runs every e2e suite through it instead (about 8 minutes on 2 cores),
 * except auth-app-role, which starts a PostgreSQL of its own and never uses the run's request role.
 */
const THROUGH_PGBOUNCER = [
  'agent/elevation-ingest.e2e.test.ts',
  'agent/decision-chain.e2e.test.ts',
  'agent/pam-settings.e2e.test.ts',
  'pam-lifecycle/full-lifecycle.e2e.test.ts',
  'pam-lifecycle/races.e2e.test.ts',
  'pam-lifecycle/actuation.e2e.test.ts',
  'pam-lifecycle/respond-revoke.e2e.test.ts',
  'pam-lifecycle/requests-list.e2e.test.ts',
  'auth.e2e.test.ts',
  'imports/csv-and-jobs.e2e.test.ts',
  'sso-login/oidc-login.e2e.test.ts',
  'tenancy/users.test.ts',
  'content/policies.e2e.test.ts',
  'audit/audit-export.e2e.test.ts',
];
const allE2eThroughPgBouncer = process.env.PGBOUNCER_ALL_E2E === 'true';
module.exports = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  transform: { '^.+\\.ts$': tsJest },
  // Three workers on the 2-core machine: much of a worker's time is spent waiting (on child processes,
  // PostgreSQL, sleeps of the time-based tests), and a third one fills it. Measured on the same files,
  // alternating: 3 to 6 % faster on a mix of unit, integration and e2e files, 17 to 40 % on the cli,
  // shutdown, agent and scale-out files.
  maxWorkers: 3,
  testSequencer: '<rootDir>/test/support/longest-first.sequencer.js',
  // Applies to hooks too; a project-level testTimeout is ignored by jest.
  testTimeout: 60000,
  projects: [
    { ...common, displayName: 'unit', rootDir: '.', testMatch: ['<rootDir>/src/**/*.spec.ts'] },
    { ...common, displayName: 'integration', rootDir: '.', testMatch: ['<rootDir>/test/integration/**/*.test.ts'], setupFiles: ['<rootDir>/test/support/env.ts'] },
    { ...common, displayName: 'e2e', rootDir: '.', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'], setupFiles: ['<rootDir>/test/support/env.ts'] },
    { ...common, displayName: 'browser', rootDir: '.', testMatch: ['<rootDir>/test/browser/**/*.test.ts'], setupFiles: ['<rootDir>/test/support/env.ts'] },
    // The request role through PgBouncer (transaction pooling, 3 server connections): see docs/scaling.md.
    {
      ...pooled,
      displayName: 'e2e-pgbouncer',
      testMatch: allE2eThroughPgBouncer ? ['<rootDir>/test/e2e/**/*.test.ts'] : THROUGH_PGBOUNCER.map((p) => `<rootDir>/test/e2e/${p}`),
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/e2e/security/auth-app-role.e2e.test.ts'],
    },
    { ...pooled, displayName: 'scale-out', testMatch: ['<rootDir>/test/scale-out/**/*.test.ts'] },
    // Real faults against servers each file starts for itself (PostgreSQL, Redis, SMTP, push gateway): docs/operations.md.
    { ...common, displayName: 'fault', rootDir: '.', testMatch: ['<rootDir>/test/fault/**/*.test.ts'], setupFiles: ['<rootDir>/test/support/env.ts'] },
  ],
};
