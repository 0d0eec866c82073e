import { defineConfig } from 'vitest/config';

/**
 * The conformance suite on PostgreSQL (project `integration-pg`): integration test files that are
 * backend-neutral — they open their engines with `tempEngine()` (test/helpers/temp-engine.ts),
 * which with RUNNEL_TEST_BACKEND=postgres gives an engine on a fresh PostgreSQL database of the
 * run's cluster, and reach it through its public API only (no `engine.db`, no raw SQL: those use
 * `tempSqliteEngine()`, a type the PostgreSQL engine has not).
 *
 * Included: the pinned rules (DESIGN.md), the API's nesting and __proto__ rules, names, the script
 * pool, the runtime's engine, concurrency, deadlines, eager dispatch, error edges, external changes
 * (a second engine on the same database), faults, idle, incidents, instance input, instance retry,
 * templates and worker stop,
 * and the browser host's security (its engine part). About 1 minute more on 2 cores.
 *
 * Not (yet) included, and why:
 * - SQLite only by nature: test/integration/db/* (file damage, disk full, WAL, read-only files,
 *   SQLite's migrations and schema snapshot), electron/* (the desktop app's bundled SQLite).
 * - Use SQLite internals in some tests (engine.db / raw SQL: tempSqliteEngine): runtime/
 *   handed-cases-in-process, turn-outcomes (a trigger of SQLite's dialect), workflows (edits a
 *   stored definition by hand), start-lease (reads the file from a fault point), missing-node-type. To join, their SQL-reading tests
 *   read through test/helpers/db-rows.ts (either backend), as rules-pinned and retry-instance do.
 * - Open their databases by path, in this process or in child processes (CLI, `runnel serve`,
 *   worker processes): cli/*, examples/*, api/contract, api/monitor-list, nodes/non-ascii-ids,
 *   runtime/crash-recovery, multi-worker, lease-recovery, lease-renewal, handed-cases-processes,
 *   repeated-transactions, server/regex-responsiveness, server/runaway-script. To join, they need
 *   a database location from the backend switch (a path or a URL) instead of a path.
 * - No database at all (nothing to conform): nodes/http, nodes/thread-pool, scripts/*; and
 *   postgres/* (PostgreSQL's own tests, which run in `integration`) but for backend-switch.
 */
const PG_CONFORMANCE = [
  // The switch itself: fails if this project silently ran on SQLite.
  'test/integration/postgres/backend-switch.test.ts',
  'test/integration/api/contract.test.ts',
  'test/integration/api/nesting.test.ts',
  'test/integration/api/prototype-keys.test.ts',
  'test/integration/dsl/names.test.ts',
  'test/integration/nodes/script-pool.test.ts',
  'test/integration/runtime/concurrency.test.ts',
  'test/integration/runtime/deadlines.test.ts',
  'test/integration/runtime/eager-dispatch.test.ts',
  'test/integration/runtime/engine.test.ts',
  'test/integration/runtime/error-edges.test.ts',
  'test/integration/runtime/faults.test.ts',
  'test/integration/runtime/idle.test.ts',
  'test/integration/runtime/external-changes.test.ts',
  'test/integration/runtime/handed-cases-in-process.test.ts',
  'test/integration/runtime/incidents.test.ts',
  'test/integration/runtime/lease-renewal.test.ts',
  'test/integration/runtime/instance-input.test.ts',
  'test/integration/runtime/retry-instance.test.ts',
  'test/integration/runtime/rules-pinned.test.ts',
  'test/integration/runtime/templates.test.ts',
  'test/integration/runtime/worker-stop.test.ts',
  'test/integration/server/security.test.ts',
];

// Engine tests use real SQLite files and real child processes: run files in forks, two at a time
// (the machines have 2 cores), with generous timeouts for the crash-recovery suites and for the
// end-to-end tests, which build the renderer and drive Chromium. A project per folder of test/
// (`vitest run --project unit` runs one: `npm run test:unit`), and `integration-pg`, the backend-
// neutral integration files again on PostgreSQL (PG_CONFORMANCE above); each inherits these settings.
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
      {
        extends: true,
        test: {
          name: 'integration-pg',
          include: PG_CONFORMANCE,
          env: { RUNNEL_TEST_BACKEND: 'postgres' },
          globalSetup: ['test/helpers/pg-global-setup.ts'],
        },
      },
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'] } },
    ],
  },
});
