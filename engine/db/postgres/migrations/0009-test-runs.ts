/**
 * PostgreSQL migration 9: test runs, as SQLite's migration 13 (engine/db/migrations/0013-test-runs.ts)
 * — `instance.test`, `instance.pins_json`, the partial `instance_test` index and the views that
 * leave test runs out — with the same names and meaning.
 */
export const sql = /* sql */ `
ALTER TABLE instance ADD COLUMN test INTEGER NOT NULL DEFAULT 0 CHECK (test IN (0, 1));
ALTER TABLE instance ADD COLUMN pins_json TEXT;
CREATE INDEX instance_test ON instance (status) WHERE test = 1;

CREATE OR REPLACE VIEW v_instance_counts AS
  SELECT status, count(*) AS count FROM instance WHERE test = 0 GROUP BY status;

CREATE OR REPLACE VIEW v_queue AS
  SELECT
    (SELECT count(*) FROM schedule WHERE lease_owner IS NULL AND kind IN ('run', 'compensate', 'wake')) AS pending,
    (SELECT count(*) FROM schedule WHERE lease_owner IS NOT NULL) AS running,
    (SELECT count(*) FROM schedule WHERE kind IN ('timer', 'timeout', 'deadline')) AS timers,
    (SELECT count(*) FROM instance WHERE status = 'PENDING' AND test = 0) AS pending_instances,
    (SELECT count(*) FROM instance WHERE status = 'RUNNING' AND test = 0) AS running_instances;

CREATE OR REPLACE VIEW v_workflow_durations AS
  WITH d AS (
    SELECT w.name AS workflow, i.ended_at - i.created_at AS duration_ms,
           row_number() OVER (PARTITION BY w.name ORDER BY i.ended_at - i.created_at) AS rn,
           count(*) OVER (PARTITION BY w.name) AS n
    FROM instance i JOIN workflow w ON w.id = i.workflow_id
    WHERE i.status = 'COMPLETED' AND i.ended_at IS NOT NULL AND i.test = 0
  )
  SELECT workflow,
         max(n) AS completed,
         avg(duration_ms)::float8 AS avg_ms,
         min(CASE WHEN rn >= (n * 50 + 99) / 100 THEN duration_ms END) AS p50_ms,
         min(CASE WHEN rn >= (n * 99 + 99) / 100 THEN duration_ms END) AS p99_ms,
         max(duration_ms) AS max_ms
  FROM d GROUP BY workflow;

CREATE OR REPLACE VIEW v_failures AS
  SELECT w.name AS workflow,
         count(*) AS total,
         count(*) FILTER (WHERE i.status = 'FAILED') AS failed,
         count(*) FILTER (WHERE i.status = 'SUSPENDED') AS suspended,
         count(*) FILTER (WHERE i.status = 'CANCELLED') AS cancelled,
         (count(*) FILTER (WHERE i.status = 'FAILED'))::float8 / count(*) AS failure_rate
  FROM instance i JOIN workflow w ON w.id = i.workflow_id
  WHERE i.test = 0
  GROUP BY w.name;
`;
