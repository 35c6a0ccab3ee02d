/** Jest in ESM mode (see ENGINEERING.md): ts-jest with useESM, `.js` suffixes stripped from relative imports. */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
  testTimeout: 30000,
  maxWorkers: 2,
  // ESM test modules are not freed between files: a worker that grew past this is replaced before its next file
  // (one ran out of memory in a long CI run).
  workerIdleMemoryLimit: '1GB',
};
