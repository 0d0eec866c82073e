/**
 * PostgreSQL: time travel's queries and reads (table `history_state`, migrations 7 and 11: keyed by
 * the history entry, a pending patch by minus the instance's id), the statements of
 * engine/db/queries/history-state.ts translated. The snapshot takes the instance's
 * lock first (./queries/context.ts), so the state read before a transition's first change of an
 * instance is the one that change starts from.
 */
import type { ReadModel, StateTimeline, TimeTravelReads } from '../../store/port';
import type { StatePatch, StateQueries } from '../../store/history-state';
import {
  selectList,
  STATE_INSTANCE_COLS,
  STATE_NODE_COLS,
  toHistoryEvent,
  toSnapshot,
  type RawHistoryRow,
  type RawStateInstance,
  type RawStateNode,
} from '../queries/history-state';
import { rowOf, rowsOf, type PgQueryable } from './pg-read';
import type { PgTx } from './queries/context';

const INSTANCE = `SELECT ${selectList(STATE_INSTANCE_COLS, true)} FROM instance WHERE id = $1`;
const NODES = `SELECT ${selectList(STATE_NODE_COLS, true)} FROM node_state WHERE instance_id = $1`;
/** An instance's node rows as one JSON array (the select list of a subquery over node_state). */
const NODES_JSON = `coalesce(json_agg(json_build_object(${STATE_NODE_COLS.map(([c, a]) => `'${a}', ${c}`).join(', ')})), '[]'::json)`;
/** An instance's pending patch is keyed by minus its id (migration 11). */
const TAKE = `DELETE FROM history_state WHERE history_id = -$1::bigint RETURNING patch_json`;
/**
 * The instance's state and its pending patch, taken out, in one statement (one round trip where
 * three were): the instance row, its node rows as a JSON array, and the pending patch.
 */
const SNAPSHOT_TAKING_PENDING = `WITH pending AS (${TAKE})
SELECT ${selectList(STATE_INSTANCE_COLS, true)},
       (SELECT ${NODES_JSON}
          FROM node_state WHERE instance_id = $1) AS "nodes",
       (SELECT patch_json FROM pending) AS "pendingJson"
  FROM instance WHERE id = $1`;
/**
 * An outcome's lease check (./queries/schedule.ts HOLDS) and, when the lease is held, what
 * {@link SNAPSHOT_TAKING_PENDING} answers, in one statement: `holds`, then the instance's columns
 * (null when it does not exist), its nodes and its pending patch (taken only when `holds`).
 */
const HOLDS_TAKING_SNAPSHOT = `WITH h AS (SELECT EXISTS (SELECT 1 FROM schedule WHERE id = $1 AND lease_owner = $2 AND version = $3) AS holds),
pending AS (DELETE FROM history_state WHERE history_id = -$4::bigint AND (SELECT holds FROM h) RETURNING patch_json)
SELECT h.holds, ${selectList(STATE_INSTANCE_COLS, true)},
       (SELECT ${NODES_JSON}
          FROM node_state WHERE instance_id = $4 AND h.holds) AS "nodes",
       (SELECT patch_json FROM pending) AS "pendingJson"
  FROM h LEFT JOIN instance ON h.holds AND instance.id = $4`;
const PUT = `INSERT INTO history_state (history_id, patch_json) VALUES ($1, $2)`;
/** A transaction's patches in one statement (one round trip where there was one a patch). */
const PUT_ALL = `INSERT INTO history_state (history_id, patch_json) SELECT * FROM unnest($1::bigint[], $2::text[])`;

/** {@link StateQueries} over the transaction `tx`. */
export function createStateQueries(tx: PgTx): StateQueries {
  return {
    snapshot: (id) => {
      tx.lockInstance(id);
      const i = tx.run<RawStateInstance>(INSTANCE, [id]).rows[0];
      return i === undefined ? undefined : toSnapshot(i, tx.run<RawStateNode>(NODES, [id]).rows);
    },
    takePending: (id) => {
      const p = tx.run<{ patch_json: string }>(TAKE, [id]).rows[0];
      return p === undefined ? undefined : (JSON.parse(p.patch_json) as StatePatch);
    },
    record: ({ instanceId, historyId, patch }) => tx.exec(PUT, [historyId === 0 ? -instanceId : historyId, JSON.stringify(patch)]),
    // One statement for any number of patches, one included.
    recordAll: (patches) => {
      tx.exec(PUT_ALL, [patches.map((p) => (p.historyId === 0 ? -p.instanceId : p.historyId)), patches.map((p) => JSON.stringify(p.patch))]);
    },
    holdsTakingSnapshot: ({ id, version, owner, instanceId }) => {
      // The instance's lock first, as for holds alone (./queries/schedule.ts).
      tx.lockInstance(instanceId);
      const r = tx.run<RawStateInstance & { holds: boolean; nodes: RawStateNode[]; pendingJson: string | null }>(HOLDS_TAKING_SNAPSHOT, [
        id,
        owner,
        version,
        instanceId,
      ]).rows[0];
      if (!r?.holds) return { holds: false };
      if (r.status === null) return { holds: true, state: undefined };
      return {
        holds: true,
        state: { snapshot: toSnapshot(r, r.nodes), pending: r.pendingJson === null ? undefined : (JSON.parse(r.pendingJson) as StatePatch) },
      };
    },
    snapshotTakingPending: (id) => {
      tx.lockInstance(id);
      const r = tx.run<RawStateInstance & { nodes: RawStateNode[]; pendingJson: string | null }>(SNAPSHOT_TAKING_PENDING, [id]).rows[0];
      if (r === undefined) return undefined;
      return { snapshot: toSnapshot(r, r.nodes), pending: r.pendingJson === null ? undefined : (JSON.parse(r.pendingJson) as StatePatch) };
    },
  };
}

const COLS = `id, node_id, type, at, attempt, actor, data_json`;

/** Time travel's reads over `db` (part of the read model). */
export function createPostgresStateReads(db: PgQueryable): Pick<ReadModel, TimeTravelReads> {
  return {
    stateTimeline: async (instanceId, at): Promise<StateTimeline> => {
      const b = await rowOf<{ first: number | null; last: number | null; firstAt: number | null; lastAt: number | null; n: number }>(
        db,
        `SELECT min(id) AS first, max(id) AS last, min(at) AS "firstAt", max(at) AS "lastAt", count(*)::int AS n FROM history WHERE instance_id = $1`,
        [instanceId],
      );
      const range = { firstId: b?.first ?? null, lastId: b?.last ?? null, firstAt: b?.firstAt ?? null, lastAt: b?.lastAt ?? null, entries: b?.n ?? 0 };
      const row =
        'historyId' in at
          ? await rowOf<RawHistoryRow>(db, `SELECT ${COLS} FROM history WHERE instance_id = $1 AND id = $2`, [instanceId, at.historyId])
          : await rowOf<RawHistoryRow>(db, `SELECT ${COLS} FROM history WHERE instance_id = $1 AND at <= $2 ORDER BY id DESC LIMIT 1`, [instanceId, at.atMs]);
      if (!row) return { range };
      const patches = await rowsOf<{ patch_json: string }>(
        db,
        `SELECT s.patch_json FROM history h JOIN history_state s ON s.history_id = h.id WHERE h.instance_id = $1 AND h.id <= $2 ORDER BY h.id`,
        [instanceId, row.id],
      );
      const position = await rowOf<{ n: number }>(db, `SELECT count(*)::int AS n FROM history WHERE instance_id = $1 AND id <= $2`, [instanceId, row.id]);
      return { range, entry: toHistoryEvent(row), position: position?.n ?? 0, patches: patches.map((p) => JSON.parse(p.patch_json) as StatePatch) };
    },
  };
}
