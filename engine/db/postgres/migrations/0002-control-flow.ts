/**
 * PostgreSQL migration 2: control flow, as SQLite's migration 5 (engine/db/migrations/0005-control-flow.ts)
 * — `instance.parent_id` / `parent_node_id`, the `child` and `event` tables, the `wake`
 * kind of schedule rows, `instance.paused_at` and `schedule.paused_ms` — with the same names and meaning. The CHECK of `schedule.kind` is
 * replaced in place (its name is PostgreSQL's default, `schedule_kind_check`).
 */
export const sql = /* sql */ `
ALTER TABLE instance ADD COLUMN parent_id BIGINT REFERENCES instance(id);
ALTER TABLE instance ADD COLUMN parent_node_id TEXT;
ALTER TABLE instance ADD COLUMN paused_at BIGINT;
ALTER TABLE schedule ADD COLUMN paused_ms BIGINT;
CREATE INDEX instance_parent ON instance (parent_id, id) WHERE parent_id IS NOT NULL;

CREATE TABLE child (
  instance_id BIGINT NOT NULL REFERENCES instance(id),
  node_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  item_index INTEGER NOT NULL,
  input_json TEXT,
  child_id BIGINT REFERENCES instance(id),
  PRIMARY KEY (instance_id, node_id, attempt, item_index)
);
CREATE INDEX child_instance ON child (child_id) WHERE child_id IS NOT NULL;

CREATE TABLE event (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instance_id BIGINT NOT NULL REFERENCES instance(id),
  name TEXT NOT NULL,
  key TEXT,
  data_json TEXT,
  actor TEXT,
  sent_at BIGINT NOT NULL,
  consumed_node_id TEXT,
  consumed_at BIGINT
);
CREATE INDEX event_open ON event (instance_id, name, id) WHERE consumed_at IS NULL;
CREATE INDEX event_instance ON event (instance_id, id);

ALTER TABLE schedule DROP CONSTRAINT schedule_kind_check;
ALTER TABLE schedule ADD CONSTRAINT schedule_kind_check CHECK (kind IN ('run', 'timer', 'timeout', 'deadline', 'compensate', 'wake'));
CREATE OR REPLACE VIEW v_queue AS
  SELECT
    (SELECT count(*) FROM schedule WHERE lease_owner IS NULL AND kind IN ('run', 'compensate', 'wake')) AS pending,
    (SELECT count(*) FROM schedule WHERE lease_owner IS NOT NULL) AS running,
    (SELECT count(*) FROM schedule WHERE kind IN ('timer', 'timeout', 'deadline')) AS timers,
    (SELECT count(*) FROM instance WHERE status = 'PENDING') AS pending_instances,
    (SELECT count(*) FROM instance WHERE status = 'RUNNING') AS running_instances;
`;
