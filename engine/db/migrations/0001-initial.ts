/**
 * Migration 1: the initial schema.
 *
 * The seed's tables (workflow, node, instance, schedule) plus per-node state, append-only
 * history, dead letters and observability views. STRICT tables; times are INTEGER epoch ms
 * (`*_at`), JSON lives in `*_json` TEXT columns. Shipped migrations are never edited.
 */
export const sql = /* sql */ `
CREATE TABLE workflow (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  version INTEGER NOT NULL CHECK (version >= 1),
  dsl_json TEXT NOT NULL,
  definition_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (name, version)
) STRICT;

-- One row per DSL node of a workflow version (what the designer and queries need without
-- parsing dsl_json): type, retry policy, timeout, variable scope.
CREATE TABLE node (
  workflow_id INTEGER NOT NULL REFERENCES workflow(id),
  node_id TEXT NOT NULL,
  type TEXT NOT NULL,
  name TEXT,
  retry_json TEXT NOT NULL,
  timeout_ms INTEGER,
  scope_json TEXT NOT NULL,
  on_failure TEXT NOT NULL CHECK (on_failure IN ('fail', 'suspend')),
  incoming INTEGER NOT NULL,
  PRIMARY KEY (workflow_id, node_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE instance (
  id INTEGER PRIMARY KEY,
  workflow_id INTEGER NOT NULL REFERENCES workflow(id),
  status TEXT NOT NULL CHECK (status IN
    ('PENDING', 'RUNNING', 'WAITING', 'SUSPENDED', 'COMPENSATING', 'COMPLETED', 'FAILED', 'CANCELLED')),
  variables_json TEXT NOT NULL,
  input_json TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1,
  error_json TEXT,
  suspension_json TEXT,
  end_status TEXT CHECK (end_status IS NULL OR end_status IN ('FAILED', 'CANCELLED')),
  business_key TEXT,
  created_at INTEGER NOT NULL,
  started_at INTEGER,
  ended_at INTEGER,
  updated_at INTEGER NOT NULL,
  deadline_at INTEGER
) STRICT;
CREATE INDEX instance_status ON instance (status, id);
CREATE INDEX instance_workflow ON instance (workflow_id, status);
CREATE INDEX instance_created ON instance (created_at);

CREATE TABLE node_state (
  instance_id INTEGER NOT NULL REFERENCES instance(id),
  node_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('PENDING', 'READY', 'RUNNING', 'WAITING', 'RETRYING', 'COMPLETED',
    'FAILED', 'SKIPPED', 'COMPENSATING', 'COMPENSATED', 'CANCELLED')),
  attempt INTEGER NOT NULL DEFAULT 0,
  attempt_limit INTEGER NOT NULL,
  pending_in INTEGER NOT NULL,
  taken_in INTEGER NOT NULL DEFAULT 0,
  version INTEGER NOT NULL DEFAULT 1,
  output_json TEXT,
  error_json TEXT,
  wait_json TEXT,
  completed_seq INTEGER,
  started_at INTEGER,
  ended_at INTEGER,
  PRIMARY KEY (instance_id, node_id)
) STRICT, WITHOUT ROWID;

-- Every timer, retry, ready step, approval timeout, deadline and compensation step. A claimed row
-- carries a lease: next_run_at moves to the lease's expiry, so an expired lease is simply due
-- again and the single (next_run_at) index serves both.
CREATE TABLE schedule (
  id INTEGER PRIMARY KEY,
  instance_id INTEGER NOT NULL REFERENCES instance(id),
  node_id TEXT,
  kind TEXT NOT NULL CHECK (kind IN ('run', 'timer', 'timeout', 'deadline', 'compensate')),
  next_run_at INTEGER NOT NULL,
  retry_count INTEGER NOT NULL DEFAULT 0,
  lease_owner TEXT,
  lease_expires_at INTEGER,
  version INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX schedule_due ON schedule (next_run_at);
CREATE INDEX schedule_instance ON schedule (instance_id);

CREATE TABLE history (
  id INTEGER PRIMARY KEY,
  instance_id INTEGER REFERENCES instance(id),
  node_id TEXT,
  type TEXT NOT NULL,
  at INTEGER NOT NULL,
  attempt INTEGER,
  actor TEXT,
  data_json TEXT
) STRICT;
CREATE INDEX history_instance ON history (instance_id, id);
CREATE TRIGGER history_no_update BEFORE UPDATE ON history BEGIN SELECT RAISE(ABORT, 'history is append-only'); END;
CREATE TRIGGER history_no_delete BEFORE DELETE ON history BEGIN SELECT RAISE(ABORT, 'history is append-only'); END;

CREATE TABLE dead_letter (
  id INTEGER PRIMARY KEY,
  instance_id INTEGER NOT NULL REFERENCES instance(id),
  node_id TEXT,
  kind TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  error_json TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX dead_letter_instance ON dead_letter (instance_id);

-- Observability views (the dashboard reads these through the API).
CREATE VIEW v_instance_counts AS
  SELECT status, count(*) AS count FROM instance GROUP BY status;

CREATE VIEW v_queue AS
  SELECT
    (SELECT count(*) FROM schedule WHERE lease_owner IS NULL AND kind IN ('run', 'compensate')) AS pending,
    (SELECT count(*) FROM schedule WHERE lease_owner IS NOT NULL) AS running,
    (SELECT count(*) FROM schedule WHERE kind IN ('timer', 'timeout', 'deadline')) AS timers,
    (SELECT count(*) FROM instance WHERE status = 'PENDING') AS pending_instances,
    (SELECT count(*) FROM instance WHERE status = 'RUNNING') AS running_instances;

CREATE VIEW v_workflow_durations AS
  WITH d AS (
    SELECT w.name AS workflow, i.ended_at - i.created_at AS duration_ms,
           row_number() OVER (PARTITION BY w.name ORDER BY i.ended_at - i.created_at) AS rn,
           count(*) OVER (PARTITION BY w.name) AS n
    FROM instance i JOIN workflow w ON w.id = i.workflow_id
    WHERE i.status = 'COMPLETED' AND i.ended_at IS NOT NULL
  )
  SELECT workflow,
         max(n) AS completed,
         avg(duration_ms) AS avg_ms,
         min(CASE WHEN rn >= (n * 50 + 99) / 100 THEN duration_ms END) AS p50_ms,
         min(CASE WHEN rn >= (n * 99 + 99) / 100 THEN duration_ms END) AS p99_ms,
         max(duration_ms) AS max_ms
  FROM d GROUP BY workflow;

CREATE VIEW v_failures AS
  SELECT w.name AS workflow,
         count(*) AS total,
         sum(i.status = 'FAILED') AS failed,
         sum(i.status = 'SUSPENDED') AS suspended,
         sum(i.status = 'CANCELLED') AS cancelled,
         CAST(sum(i.status = 'FAILED') AS REAL) / count(*) AS failure_rate
  FROM instance i JOIN workflow w ON w.id = i.workflow_id
  GROUP BY w.name;
`;
