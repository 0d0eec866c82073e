import { defineConfig } from 'vitest/config';

// Engine tests use real SQLite files and real child processes: run files in forks, two at a time
// (the machines have 2 cores), with generous timeouts for the crash-recovery suites and for the
// end-to-end tests, which build the renderer and drive Chromium. Three projects, one per folder
// of test/ (`vitest run --project unit` runs one: `npm run test:unit`); each inherits these settings.
export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      // The integration tests include PostgreSQL's (test/integration/postgres/): one throwaway
      // cluster per run (test/helpers/pg-global-setup.ts; RUNNEL_TEST_PG_URL names a server instead).
      { extends: true, test: { name: 'integration', include: ['test/integration/**/*.test.ts'], globalSetup: ['test/helpers/pg-global-setup.ts'] } },
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'] } },
    ],
  },
});
