/**
 * One `npm test` runs every tier. Integration, e2e and browser tests share one
 * uniquely named database created by the global setup and dropped at the end.
 */
// Type checking is done once by `tsc` in pretest; ts-jest only transpiles.
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.jest.json', diagnostics: false }];
const common = {
  transform: { '^.+\\.ts$': tsJest },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testEnvironment: 'node',
};
module.exports = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  transform: { '^.+\\.ts$': tsJest },
  maxWorkers: 2,
  // Applies to hooks too; a project-level testTimeout is ignored by jest.
  testTimeout: 60000,
  projects: [
    { ...common, displayName: 'unit', rootDir: '.', testMatch: ['<rootDir>/src/**/*.spec.ts'] },
    { ...common, displayName: 'integration', rootDir: '.', testMatch: ['<rootDir>/test/integration/**/*.test.ts'], setupFiles: ['<rootDir>/test/support/env.ts'] },
    { ...common, displayName: 'e2e', rootDir: '.', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'], setupFiles: ['<rootDir>/test/support/env.ts'] },
    { ...common, displayName: 'browser', rootDir: '.', testMatch: ['<rootDir>/test/browser/**/*.test.ts'], setupFiles: ['<rootDir>/test/support/env.ts'] },
  ],
};
