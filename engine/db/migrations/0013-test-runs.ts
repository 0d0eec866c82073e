/**
 * Migration 13: test runs (`instance:start` with `test: true`, `runnel run --test`).
 *
 * - `instance.test`: 1 for a test run (and for the child instances it starts), else 0. A test run
 *   runs for real but is left out of the metrics and of the default instance list.
 * - `instance.pins_json`: a test run's pinned results by node id (a JSON object), or NULL: a pinned
 *   node completes with its pinned result instead of running its handler.
 * - `instance_test`, a partial index over test runs by status: the views count every instance by
 *   status (the status index alone) and take the test runs away (this index alone), so a file
 *   without test runs counts as fast as before.
 * - The observability views leave test runs out.
 */
export const sql = /* sql */ `
ALTER TABLE instance ADD COLUMN test INTEGER NOT NULL DEFAULT 0 CHECK (test IN (0, 1));
ALTER TABLE instance ADD COLUMN pins_json TEXT;
CREATE INDEX instance_test ON instance (status) WHERE test = 1;

DROP VIEW v_instance_counts;
CREATE VIEW v_instance_counts AS
  SELECT a.status AS status, a.n - coalesce(t.n, 0) AS count
  FROM (SELECT status, count(*) AS n FROM instance GROUP BY status) a
  LEFT JOIN (SELECT status, count(*) AS n FROM instance WHERE test = 1 GROUP BY status) t ON t.status = a.status
  WHERE a.n - coalesce(t.n, 0) > 0;

DROP VIEW v_queue;
CREATE VIEW v_queue AS
  SELECT
    (SELECT count(*) FROM schedule WHERE lease_owner IS NULL AND kind IN ('run', 'compensate', 'wake')) AS pending,
    (SELECT count(*) FROM schedule WHERE lease_owner IS NOT NULL) AS running,
    (SELECT count(*) FROM schedule WHERE kind IN ('timer', 'timeout', 'deadline')) AS timers,
    (SELECT count(*) FROM instance WHERE status = 'PENDING') - (SELECT count(*) FROM instance WHERE status = 'PENDING' AND test = 1) AS pending_instances,
    (SELECT count(*) FROM instance WHERE status = 'RUNNING') - (SELECT count(*) FROM instance WHERE status = 'RUNNING' AND test = 1) AS running_instances;

DROP VIEW v_workflow_durations;
CREATE VIEW v_workflow_durations AS
  WITH d AS (
    SELECT w.name AS workflow, i.ended_at - i.created_at AS duration_ms,
           row_number() OVER (PARTITION BY w.name ORDER BY i.ended_at - i.created_at) AS rn,
           count(*) OVER (PARTITION BY w.name) AS n
    FROM instance i JOIN workflow w ON w.id = i.workflow_id
    WHERE i.status = 'COMPLETED' AND i.ended_at IS NOT NULL AND i.test = 0
  )
  SELECT workflow,
         max(n) AS completed,
         avg(duration_ms) AS avg_ms,
         min(CASE WHEN rn >= (n * 50 + 99) / 100 THEN duration_ms END) AS p50_ms,
         min(CASE WHEN rn >= (n * 99 + 99) / 100 THEN duration_ms END) AS p99_ms,
         max(duration_ms) AS max_ms
  FROM d GROUP BY workflow;

DROP VIEW v_failures;
CREATE VIEW v_failures AS
  SELECT w.name AS workflow,
         count(*) AS total,
         sum(i.status = 'FAILED') AS failed,
         sum(i.status = 'SUSPENDED') AS suspended,
         sum(i.status = 'CANCELLED') AS cancelled,
         CAST(sum(i.status = 'FAILED') AS REAL) / count(*) AS failure_rate
  FROM instance i JOIN workflow w ON w.id = i.workflow_id
  WHERE i.test = 0
  GROUP BY w.name;
`;
