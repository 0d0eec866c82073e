import { defineConfig } from 'vitest/config';

// Engine tests use real SQLite files and real child processes: run files in forks, two at a time
// (the machines have 2 cores), with generous timeouts for the crash-recovery suites.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
