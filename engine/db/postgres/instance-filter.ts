/**
 * PostgreSQL: the one meaning of an instance filter (the list, the status counts and bulk
 * actions), as WHERE terms over `instance i` (and `workflow w` when it names a workflow or
 * version) with `$n` parameters. The SQLite twin is engine/db/queries/instance-filter.ts; the two
 * match the same rows:
 * - `text` is a substring match with SQLite's LIKE rules: `%` and `_` in it are literal, and it
 *   is case-insensitive for ASCII letters only (SQLite's LIKE without case_sensitive_like), done
 *   here by folding A–Z on both sides with `translate` (ILIKE would fold every letter the
 *   database's locale knows).
 * - `waitingFor` timer/approval reads `wait_json`'s `kind` with `::jsonb ->>` (SQLite: json_extract).
 */
import type { InstanceFilter } from '../../store/port';
import { CURRENT_NODE_SQL, testTerm } from '../queries/instance-filter';

export { CURRENT_NODE_SQL };

/** A where clause built from a filter: SQL terms (joined by AND), their parameters (`$1` is `params[0]`), whether `workflow w` must be joined. */
export interface PgWhereClause {
  terms: string[];
  params: unknown[];
  joinWorkflow: boolean;
}

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';

/** `sql` (a text expression) with ASCII capitals folded to lower case, as SQLite's LIKE compares. */
export function foldAscii(sql: string): string {
  return `translate(${sql}, '${UPPER}', '${LOWER}')`;
}

/**
 * The WHERE terms of an instance filter (see the module doc). `parts` picks which kinds of terms
 * to include (`status`, `paging`: beforeId, afterId, upToId, ids), so counts can leave the status
 * out. Parameters continue from `params` when given (for statements that add their own).
 */
export function buildInstanceWherePg(filter: InstanceFilter, parts: { status?: boolean; paging?: boolean; test?: boolean } = {}, params: unknown[] = []): PgWhereClause {
  const terms: string[] = [];
  const p = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  let joinWorkflow = false;
  if (parts.status !== false && filter.status && filter.status.length > 0) {
    terms.push(`i.status IN (${filter.status.map(p).join(', ')})`);
  }
  if (filter.workflow !== undefined) {
    terms.push(`w.name = ${p(filter.workflow)}`);
    joinWorkflow = true;
  }
  if (filter.workflowVersion !== undefined) {
    terms.push(`w.version = ${p(filter.workflowVersion)}`);
    joinWorkflow = true;
  }
  if (filter.createdFrom !== undefined) terms.push(`i.created_at >= ${p(filter.createdFrom)}`);
  if (filter.createdTo !== undefined) terms.push(`i.created_at <= ${p(filter.createdTo)}`);
  if (filter.text !== undefined && filter.text !== '') {
    const id = p(filter.text);
    const like = p(`%${filter.text.replace(/[\\%_]/g, (m) => `\\${m}`)}%`.replace(/[A-Z]/g, (c) => c.toLowerCase()));
    const match = (col: string) => `${foldAscii(col)} LIKE ${like} ESCAPE '\\'`;
    terms.push(`(i.id::text = ${id} OR ${match('i.business_key')} OR ${match('i.error_json')} OR ${match('i.suspension_json')})`);
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
        `i.status IN ('RUNNING', 'WAITING') AND EXISTS (SELECT 1 FROM node_state n WHERE n.instance_id = i.id AND n.status = 'WAITING' AND (n.wait_json::jsonb ->> 'kind') = ${p(filter.waitingFor)})`,
      );
  }
  if (filter.parentId !== undefined) terms.push(`i.parent_id = ${p(filter.parentId)}`);
  if (filter.businessKey !== undefined) terms.push(`i.business_key = ${p(filter.businessKey)}`);
  if (filter.paused !== undefined) terms.push(filter.paused ? 'i.paused_at IS NOT NULL' : 'i.paused_at IS NULL');
  if (parts.test !== false) {
    const t = testTerm(filter);
    if (t !== undefined) terms.push(t);
  }
  if (filter.node !== undefined) {
    terms.push(
      `EXISTS (SELECT 1 FROM node_state n WHERE n.instance_id = i.id AND n.node_id = ${p(filter.node)}
         AND (n.status IN ${CURRENT_NODE_SQL} OR (n.status = 'FAILED' AND i.status IN ('FAILED', 'SUSPENDED'))))`,
    );
  }
  if (parts.paging !== false) {
    // An empty id list matches nothing (not everything).
    if (filter.ids !== undefined) terms.push(filter.ids.length === 0 ? 'FALSE' : `i.id IN (${filter.ids.map(p).join(', ')})`);
    if (filter.beforeId !== undefined) terms.push(`i.id < ${p(filter.beforeId)}`);
    if (filter.afterId !== undefined) terms.push(`i.id > ${p(filter.afterId)}`);
    if (filter.upToId !== undefined) terms.push(`i.id <= ${p(filter.upToId)}`);
  }
  return { terms, params, joinWorkflow };
}
