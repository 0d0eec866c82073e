/**
 * PostgreSQL migration 1: the schema SQLite reaches after its migrations 1–4
 * (engine/db/migrations/), in one step — the same tables, columns, constraints, indexes and
 * observability views, with the same names and meaning. Shipped migrations are never edited.
 *
 * Translation from SQLite: ids are `BIGINT GENERATED ALWAYS AS IDENTITY`; times (`*_at`, epoch ms)
 * and `timeout_ms`, `completed_seq` are BIGINT; counters (versions, attempts, `incoming`,
 * `pending_in`, …) are INTEGER; JSON stays TEXT in `*_json` columns (readers parse it; SQL casts
 * to jsonb only where SQLite used json_*()). CHECKs and foreign keys are kept (SQLite enforces
 * them too: `foreign_keys = ON`). History is append-only: UPDATE, DELETE and TRUNCATE of it raise
 * `history is append-only` (SQLSTATE P0001). The views give the columns SQLite's do, with the
 * same values: counts are BIGINT, averages and rates float8 (SQLite REAL), percentiles the same
 * nearest-rank rule with integer division.
 */
export const sql = /* sql */ `
CREATE TABLE workflow (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name TEXT NOT NULL,
  version INTEGER NOT NULL CHECK (version >= 1),
  dsl_json TEXT NOT NULL,
  definition_hash TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  deleted_at BIGINT,
  UNIQUE (name, version)
);

-- One row per DSL node of a workflow version (what the designer and queries need without
-- parsing dsl_json): type, retry policy, timeout, variable scope.
CREATE TABLE node (
  workflow_id BIGINT NOT NULL REFERENCES workflow(id),
  node_id TEXT NOT NULL,
  type TEXT NOT NULL,
  name TEXT,
  retry_json TEXT NOT NULL,
  timeout_ms BIGINT,
  scope_json TEXT NOT NULL,
  on_failure TEXT NOT NULL CHECK (on_failure IN ('fail', 'suspend')),
  incoming INTEGER NOT NULL,
  PRIMARY KEY (workflow_id, node_id)
);

CREATE TABLE instance (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workflow_id BIGINT NOT NULL REFERENCES workflow(id),
  status TEXT NOT NULL CHECK (status IN
    ('PENDING', 'RUNNING', 'WAITING', 'SUSPENDED', 'COMPENSATING', 'COMPLETED', 'FAILED', 'CANCELLED')),
  variables_json TEXT NOT NULL,
  input_json TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 1,
  error_json TEXT,
  suspension_json TEXT,
  end_status TEXT CHECK (end_status IS NULL OR end_status IN ('FAILED', 'CANCELLED')),
  business_key TEXT,
  created_at BIGINT NOT NULL,
  started_at BIGINT,
  ended_at BIGINT,
  updated_at BIGINT NOT NULL,
  deadline_at BIGINT
);
CREATE INDEX instance_status ON instance (status, id);
CREATE INDEX instance_workflow ON instance (workflow_id, status);
CREATE INDEX instance_created ON instance (created_at);
-- The dashboard series (SQLite migration 2): partial, so live instances' status changes never touch it.
CREATE INDEX instance_ended ON instance (ended_at, status, created_at, workflow_id) WHERE ended_at IS NOT NULL;

CREATE TABLE node_state (
  instance_id BIGINT NOT NULL REFERENCES instance(id),
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
  completed_seq BIGINT,
  started_at BIGINT,
  ended_at BIGINT,
  PRIMARY KEY (instance_id, node_id)
);

-- Every timer, retry, ready step, approval timeout, deadline and compensation step. A claimed row
-- carries a lease: next_run_at moves to the lease's expiry, so an expired lease is simply due
-- again and the single (next_run_at) index serves both.
CREATE TABLE schedule (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id BIGINT NOT NULL REFERENCES instance(id),
  node_id TEXT,
  kind TEXT NOT NULL CHECK (kind IN ('run', 'timer', 'timeout', 'deadline', 'compensate')),
  next_run_at BIGINT NOT NULL,
  retry_count INTEGER NOT NULL DEFAULT 0,
  lease_owner TEXT,
  lease_expires_at BIGINT,
  version INTEGER NOT NULL DEFAULT 1,
  created_at BIGINT NOT NULL
);
CREATE INDEX schedule_due ON schedule (next_run_at);
CREATE INDEX schedule_instance ON schedule (instance_id);
-- Deadlines are looked up on their own each turn (SQLite migration 4).
CREATE INDEX schedule_deadline ON schedule (next_run_at) WHERE kind = 'deadline';

CREATE TABLE history (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id BIGINT REFERENCES instance(id),
  node_id TEXT,
  type TEXT NOT NULL,
  at BIGINT NOT NULL,
  attempt INTEGER,
  actor TEXT,
  data_json TEXT
);
CREATE INDEX history_instance ON history (instance_id, id);
CREATE FUNCTION history_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'history is append-only';
END
$$;
CREATE TRIGGER history_no_update BEFORE UPDATE ON history FOR EACH ROW EXECUTE FUNCTION history_append_only();
CREATE TRIGGER history_no_delete BEFORE DELETE ON history FOR EACH ROW EXECUTE FUNCTION history_append_only();
CREATE TRIGGER history_no_truncate BEFORE TRUNCATE ON history FOR EACH STATEMENT EXECUTE FUNCTION history_append_only();

CREATE TABLE dead_letter (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id BIGINT NOT NULL REFERENCES instance(id),
  node_id TEXT,
  kind TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  error_json TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
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
         avg(duration_ms)::float8 AS avg_ms,
         min(CASE WHEN rn >= (n * 50 + 99) / 100 THEN duration_ms END) AS p50_ms,
         min(CASE WHEN rn >= (n * 99 + 99) / 100 THEN duration_ms END) AS p99_ms,
         max(duration_ms) AS max_ms
  FROM d GROUP BY workflow;

CREATE VIEW v_failures AS
  SELECT w.name AS workflow,
         count(*) AS total,
         count(*) FILTER (WHERE i.status = 'FAILED') AS failed,
         count(*) FILTER (WHERE i.status = 'SUSPENDED') AS suspended,
         count(*) FILTER (WHERE i.status = 'CANCELLED') AS cancelled,
         (count(*) FILTER (WHERE i.status = 'FAILED'))::float8 / count(*) AS failure_rate
  FROM instance i JOIN workflow w ON w.id = i.workflow_id
  GROUP BY w.name;
`;
