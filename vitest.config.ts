import { defineConfig } from 'vitest/config';

/**
 * The conformance suite on PostgreSQL (project `integration-pg`, part of `npm test`; alone:
 * `npx vitest run --project integration-pg`): integration test files that run unchanged on both
 * backends. They open engines with `tempEngine()` / databases with `tempLocation()`
 * (test/helpers/temp-engine.ts), which under RUNNEL_TEST_BACKEND=postgres give a fresh database
 * of the run's PostgreSQL cluster (test/helpers/pg-global-setup.ts) instead of a SQLite file, and
 * read stored rows, where they must, through test/helpers/db-rows.ts (either backend). Tests that
 * need SQLite itself use `tempSqliteEngine()`, whose type the PostgreSQL engine has not.
 *
 * Included (below): the pinned rules, the handed cases in process and with real processes (but
 * C11 and C12, SQLite's locking and WAL, skipped on PostgreSQL), crash recovery (SIGKILL at random
 * points), lease renewal across worker processes, a second engine on the same database
 * (external changes), the API contract and its nesting and __proto__ rules and the text a backend cannot store, the Database view's channels, deadlines, eager
 * dispatch, instance input and retry, incidents, error edges, idle, concurrency, templates,
 * the change feed (its reads and consumers, `runnel changes --follow --consumer` across SIGKILL, and the browser host's stream of it, examples/changes-to-postgres.ts across SIGKILL),
 * names, faults, worker stop, the script pool, the browser host's security, and the switch
 * itself. Cost, measured 2026-12-02 on the 2 shared cores: 182 s wall for this project alone
 * (25 files, 302 s of tests over the two forks; crash recovery 80 s and handed-cases-processes 64 s
 * of it), up to ~240 s while other work loads the machine.
 *
 * Not included, and why:
 * - SQLite by nature: db/* (file damage, disk full, WAL, read-only files, SQLite's migrations and
 *   schema snapshot; db/postgres/* are PostgreSQL's own, in `integration`), electron/* (the desktop
 *   app's bundled SQLite).
 * - Read or write SQLite's rows in ways that have no PostgreSQL twin yet: lease-recovery (a worker
 *   "dies" by `engine.db.close()`), turn-outcomes (a SQLite trigger), workflows (edits a stored
 *   definition by hand), start-lease (reads the file from a fault point), missing-node-type,
 *   monitor-list (inserts 100,000 rows through better-sqlite3).
 * - Take a file path, in this process or in child processes (the CLI, `runnel serve`, workers):
 *   cli/*, examples/* (but changes-to-postgres), nodes/non-ascii-ids, multi-worker (db/postgres has its PostgreSQL twin),
 *   repeated-transactions, server/regex-responsiveness, server/runaway-script. To join: a location from `tempLocation()` instead of the path.
 * - No database at all: nodes/http, nodes/thread-pool, scripts/*; and postgres/*, PostgreSQL's
 *   own tests, which run in `integration` (but for backend-switch).
 */
const PG_CONFORMANCE = [
  // The switch itself: fails if this project silently ran on SQLite.
  'test/integration/postgres/backend-switch.test.ts',
  'test/integration/api/contract.test.ts',
  'test/integration/api/database.test.ts',
  'test/integration/api/nesting.test.ts',
  'test/integration/api/oldest-waiting.test.ts',
  'test/integration/api/prototype-keys.test.ts',
  'test/integration/api/unstorable-text.test.ts',
  'test/integration/dsl/names.test.ts',
  'test/integration/examples/changes-to-postgres.test.ts',
  'test/integration/nodes/script-pool.test.ts',
  'test/integration/runtime/change-feed.test.ts',
  'test/integration/runtime/instance-ids.test.ts',
  'test/integration/runtime/change-feed-crash.test.ts',
  'test/integration/runtime/concurrency.test.ts',
  'test/integration/runtime/concurrency-limit.test.ts',
  'test/integration/runtime/concurrency-limit-processes.test.ts',
  'test/integration/runtime/control-flow.test.ts',
  'test/integration/runtime/control-flow-crash.test.ts',
  'test/integration/runtime/crash-recovery.test.ts',
  'test/integration/runtime/deadlines.test.ts',
  'test/integration/runtime/eager-dispatch.test.ts',
  'test/integration/runtime/engine.test.ts',
  'test/integration/runtime/error-edges.test.ts',
  'test/integration/runtime/faults.test.ts',
  'test/integration/runtime/idle.test.ts',
  'test/integration/runtime/external-changes.test.ts',
  'test/integration/runtime/handed-cases-in-process.test.ts',
  'test/integration/runtime/handed-cases-processes.test.ts',
  'test/integration/runtime/incidents.test.ts',
  'test/integration/runtime/lease-renewal.test.ts',
  'test/integration/runtime/instance-input.test.ts',
  'test/integration/runtime/instant-rows.test.ts',
  'test/integration/runtime/pause.test.ts',
  'test/integration/runtime/pause-crash.test.ts',
  'test/integration/runtime/priority.test.ts',
  'test/integration/runtime/test-runs.test.ts',
  'test/integration/runtime/retention.test.ts',
  'test/integration/runtime/retention-processes.test.ts',
  'test/integration/runtime/schedules.test.ts',
  'test/integration/runtime/schedules-processes.test.ts',
  'test/integration/runtime/retry-instance.test.ts',
  'test/integration/runtime/time-travel.test.ts',
  'test/integration/runtime/rules-pinned.test.ts',
  'test/integration/runtime/templates.test.ts',
  'test/integration/runtime/worker-stop.test.ts',
  'test/integration/server/changes-stream.test.ts',
  'test/integration/server/security.test.ts',
];

// Engine tests use real SQLite files and real child processes: run files in forks, two at a time
// (the machines have 2 cores), with generous timeouts for the crash-recovery suites and for the
// end-to-end tests, which build the renderer and drive Chromium. A project per folder of test/
// (`vitest run --project unit` runs one: `npm run test:unit`), and `integration-pg`, the backend-
// neutral integration files again on PostgreSQL (PG_CONFORMANCE above); each inherits these settings.
/**
 * Every test checks time travel's record: each transaction's state derived from its writes is
 * compared with the stored one (engine/store/history-state.ts TrackOptions.verify); child processes
 * the tests start inherit it.
 */
const CHECKS = { RUNNEL_CHECK_STATE_RECORD: '1' };

export default defineConfig({
  test: {
    env: CHECKS,
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      // The integration tests include PostgreSQL's (test/integration/postgres/): one throwaway
      // cluster per run (test/helpers/pg-global-setup.ts; RUNNEL_TEST_PG_URL names a server instead).
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/helpers/pg-global-setup.ts', 'test/helpers/children-global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration-pg',
          include: PG_CONFORMANCE,
          env: { ...CHECKS, RUNNEL_TEST_BACKEND: 'postgres' },
          globalSetup: ['test/helpers/pg-global-setup.ts', 'test/helpers/children-global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/helpers/pg-global-setup.ts', 'test/helpers/renderer-global-setup.ts'],
        },
      },
    ],
  },
});
