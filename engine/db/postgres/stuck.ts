/**
 * PostgreSQL: "why is it stuck" — the list query's column that gathers an instance's current
 * node states as JSON text, in the shape engine/db/queries/stuck.ts's describeStuck reads
 * ({@link StuckSource.nodes_json}); describeStuck itself is shared (it is pure: no SQL).
 */
import { CURRENT_NODE_SQL } from './instance-filter';

export { describeStuck, type StuckInfo, type StuckSource } from '../queries/stuck';

/**
 * The current node states of `i` as a JSON text array of `[node_id, status, attempt,
 * attempt_limit, wait, started_at]` (SQLite: json_group_array); NULL for COMPLETED and CANCELLED
 * instances, `[]` when none. Cast to text: describeStuck parses it, and `pg` would parse a json
 * column itself.
 */
export const NODES_COL = `CASE WHEN i.status IN ('COMPLETED', 'CANCELLED') THEN NULL ELSE
  coalesce((SELECT json_agg(json_build_array(n.node_id, n.status, n.attempt, n.attempt_limit, n.wait_json::json, n.started_at))::text
     FROM node_state n WHERE n.instance_id = i.id AND (n.status IN ${CURRENT_NODE_SQL} OR n.status = 'FAILED')), '[]') END AS nodes_json`;
