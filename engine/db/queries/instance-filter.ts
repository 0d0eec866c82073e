/**
 * SQLite: the one meaning of an instance filter (the list, the status counts and bulk actions),
 * as WHERE terms over `instance i` (and `workflow w` when it names a workflow or version).
 */
import type { InstanceFilter } from '../../store/port';

/** A where clause built from a filter: SQL terms (joined by AND), their parameters, whether `workflow w` must be joined. */
export interface WhereClause {
  terms: string[];
  params: unknown[];
  joinWorkflow: boolean;
}

/** Node states that count as "current" for an instance that is still going (see {@link StuckInfo}). */
export const CURRENT_NODE_SQL = `('READY', 'RUNNING', 'WAITING', 'RETRYING', 'COMPENSATING')`;

/**
 * The WHERE terms of an instance filter over `instance i` (and `workflow w` when it names a
 * workflow or version): the one meaning of a filter for the list, the status counts and bulk
 * actions. `parts` picks which kinds of terms to include (`status`, `paging`: beforeId, afterId,
 * upToId, ids), so counts can leave the status out.
 */
export function buildInstanceWhere(filter: InstanceFilter, parts: { status?: boolean; paging?: boolean; test?: boolean } = {}): WhereClause {
  const terms: string[] = [];
  const params: unknown[] = [];
  let joinWorkflow = false;
  if (parts.status !== false && filter.status && filter.status.length > 0) {
    terms.push(`i.status IN (${filter.status.map(() => '?').join(', ')})`);
    params.push(...filter.status);
  }
  if (filter.workflow !== undefined) {
    terms.push('w.name = ?');
    params.push(filter.workflow);
    joinWorkflow = true;
  }
  if (filter.workflowVersion !== undefined) {
    terms.push('w.version = ?');
    params.push(filter.workflowVersion);
    joinWorkflow = true;
  }
  if (filter.createdFrom !== undefined) {
    terms.push('i.created_at >= ?');
    params.push(filter.createdFrom);
  }
  if (filter.createdTo !== undefined) {
    terms.push('i.created_at <= ?');
    params.push(filter.createdTo);
  }
  if (filter.text !== undefined && filter.text !== '') {
    terms.push(
      `(CAST(i.id AS TEXT) = ? OR i.business_key LIKE ? ESCAPE '\\' OR i.error_json LIKE ? ESCAPE '\\' OR i.suspension_json LIKE ? ESCAPE '\\')`,
    );
    const like = `%${filter.text.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
    params.push(filter.text, like, like, like);
  }
  switch (filter.waitingFor) {
    case undefined:
      break;
    case 'person':
      terms.push(`i.status = 'SUSPENDED'`);
      break;
    case 'concurrency':
      terms.push(`i.held = 1 AND i.status = 'PENDING'`);
      break;
    case 'retry':
      terms.push(`i.status IN ('RUNNING', 'WAITING') AND EXISTS (SELECT 1 FROM node_state n WHERE n.instance_id = i.id AND n.status = 'RETRYING')`);
      break;
    default:
      terms.push(
        `i.status IN ('RUNNING', 'WAITING') AND EXISTS (SELECT 1 FROM node_state n WHERE n.instance_id = i.id AND n.status = 'WAITING' AND json_extract(n.wait_json, '$.kind') = ?)`,
      );
      params.push(filter.waitingFor);
  }
  if (filter.parentId !== undefined) {
    terms.push('i.parent_id = ?');
    params.push(filter.parentId);
  }
  if (filter.businessKey !== undefined) {
    terms.push('i.business_key = ?');
    params.push(filter.businessKey);
  }
  if (filter.paused !== undefined) terms.push(filter.paused ? 'i.paused_at IS NOT NULL' : 'i.paused_at IS NULL');
  if (parts.test !== false) {
    const t = testTerm(filter);
    if (t !== undefined) terms.push(t);
  }
  if (filter.node !== undefined) {
    terms.push(
      `EXISTS (SELECT 1 FROM node_state n WHERE n.instance_id = i.id AND n.node_id = ?
         AND (n.status IN ${CURRENT_NODE_SQL} OR (n.status = 'FAILED' AND i.status IN ('FAILED', 'SUSPENDED'))))`,
    );
    params.push(filter.node);
  }
  if (parts.paging !== false) {
    if (filter.ids !== undefined) {
      // An empty id list matches nothing (not everything).
      terms.push(filter.ids.length === 0 ? '0' : `i.id IN (${filter.ids.map(() => '?').join(', ')})`);
      params.push(...filter.ids);
    }
    if (filter.beforeId !== undefined) {
      terms.push('i.id < ?');
      params.push(filter.beforeId);
    }
    if (filter.afterId !== undefined) {
      terms.push('i.id > ?');
      params.push(filter.afterId);
    }
    if (filter.upToId !== undefined) {
      terms.push('i.id <= ?');
      params.push(filter.upToId);
    }
  }
  return { terms, params, joinWorkflow };
}

/**
 * The filter's test-run term over `instance i` (see {@link InstanceFilter.test}): `i.test = 1`,
 * `i.test = 0`, or undefined when the filter names `ids` or a `parentId` and says nothing of test runs.
 */
export function testTerm(filter: InstanceFilter): string | undefined {
  if (filter.test === true) return 'i.test = 1';
  if (filter.test === false) return 'i.test = 0';
  if (filter.ids !== undefined || filter.parentId !== undefined) return undefined;
  return 'i.test = 0';
}
