/**
 * Migration 5: control flow — child instances (`subworkflow` and `map` nodes), events sent to
 * instances (`event` nodes), the `wake` kind of schedule rows, and pausing an instance.
 *
 * - `instance.paused_at` / `schedule.paused_ms`: a paused instance (since when), and the time a
 *   row of it had left when the pause parked it (its `next_run_at` is then out of reach, so no
 *   claim sees it; unpausing makes it due again that much later).
 * - `instance.parent_id` / `parent_node_id`: the instance and node that started a child (NULL
 *   for an instance started by a person or a program); the partial index serves "children of".
 * - `child`: one row per child a node attempt runs, in item order (a `subworkflow` node has one,
 *   a `map` node one per item). `input_json` holds a child's start variables until it starts
 *   (then NULL: the child instance keeps them); `child_id` is the child instance once started.
 * - `event`: every event sent to an instance, kept (consumed or not) as history is; `consumed_*`
 *   say which node took it and when. The partial index finds the oldest unconsumed one of a name.
 * - `schedule.kind` gains `wake`. SQLite cannot change a CHECK in place, so the table is made
 *   anew with its rows and indexes (https://sqlite.org/lang_altertable.html, "Making Other Kinds
 *   Of Table Schema Changes"); the view over it is dropped first and made again.
 * - `schedule.id` becomes AUTOINCREMENT: an id is never given twice. Without it SQLite hands a new
 *   row the id of the highest row deleted before it, and a transition that ended a child instance
 *   (deleting its rows, the claim's among them) and then inserted its parent's wake row or the
 *   next child's step gave the new row the claim's id, which the commit then deleted as the
 *   consumed claim: the parent waited for ever. Ids that only grow make "the row I claimed" mean
 *   one row (PostgreSQL's identity columns never reuse either).
 */
export const sql = /* sql */ `
ALTER TABLE instance ADD COLUMN parent_id INTEGER REFERENCES instance(id);
ALTER TABLE instance ADD COLUMN parent_node_id TEXT;
ALTER TABLE instance ADD COLUMN paused_at INTEGER;
CREATE INDEX instance_parent ON instance (parent_id, id) WHERE parent_id IS NOT NULL;

CREATE TABLE child (
  instance_id INTEGER NOT NULL REFERENCES instance(id),
  node_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  item_index INTEGER NOT NULL,
  input_json TEXT,
  child_id INTEGER REFERENCES instance(id),
  PRIMARY KEY (instance_id, node_id, attempt, item_index)
) STRICT, WITHOUT ROWID;
CREATE INDEX child_instance ON child (child_id) WHERE child_id IS NOT NULL;

CREATE TABLE event (
  id INTEGER PRIMARY KEY,
  instance_id INTEGER NOT NULL REFERENCES instance(id),
  name TEXT NOT NULL,
  key TEXT,
  data_json TEXT,
  actor TEXT,
  sent_at INTEGER NOT NULL,
  consumed_node_id TEXT,
  consumed_at INTEGER
) STRICT;
CREATE INDEX event_open ON event (instance_id, name, id) WHERE consumed_at IS NULL;
CREATE INDEX event_instance ON event (instance_id, id);

DROP VIEW v_queue;
CREATE TABLE schedule_new (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  instance_id INTEGER NOT NULL REFERENCES instance(id),
  node_id TEXT,
  kind TEXT NOT NULL CHECK (kind IN ('run', 'timer', 'timeout', 'deadline', 'compensate', 'wake')),
  next_run_at INTEGER NOT NULL,
  retry_count INTEGER NOT NULL DEFAULT 0,
  lease_owner TEXT,
  lease_expires_at INTEGER,
  version INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  paused_ms INTEGER
) STRICT;
INSERT INTO schedule_new (id, instance_id, node_id, kind, next_run_at, retry_count, lease_owner, lease_expires_at, version, created_at)
  SELECT id, instance_id, node_id, kind, next_run_at, retry_count, lease_owner, lease_expires_at, version, created_at FROM schedule;
DROP TABLE schedule;
ALTER TABLE schedule_new RENAME TO schedule;
CREATE INDEX schedule_due ON schedule (next_run_at);
CREATE INDEX schedule_instance ON schedule (instance_id);
CREATE INDEX schedule_deadline ON schedule (next_run_at) WHERE kind = 'deadline';
CREATE VIEW v_queue AS
  SELECT
    (SELECT count(*) FROM schedule WHERE lease_owner IS NULL AND kind IN ('run', 'compensate', 'wake')) AS pending,
    (SELECT count(*) FROM schedule WHERE lease_owner IS NOT NULL) AS running,
    (SELECT count(*) FROM schedule WHERE kind IN ('timer', 'timeout', 'deadline')) AS timers,
    (SELECT count(*) FROM instance WHERE status = 'PENDING') AS pending_instances,
    (SELECT count(*) FROM instance WHERE status = 'RUNNING') AS running_instances;
`;
