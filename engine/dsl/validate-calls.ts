/**
 * Checks of the workflows a definition calls (its `subworkflow` and `map` nodes), against what is
 * deployed: each called workflow (and pinned version) must exist, and no chain of calls may come
 * back to the workflow itself (BPMN call activities, Temporal child workflows: a cycle would
 * start children for ever).
 *
 * Pure: the deployed versions come through a lookup, synchronous inside a write transaction or
 * over a map read beforehand (./validate.ts stays free of storage).
 */
import { isRecord, type Problem } from './validate-problems';

/** One call a definition makes: the node, and the workflow (and version) it names. */
export interface WorkflowCall {
  nodeIndex: number;
  nodeId: string;
  workflow: string;
  version?: number;
}

/** Node types that call a workflow by `config.workflow`. */
export const CALLING_TYPES: ReadonlySet<string> = new Set(['subworkflow', 'map']);

/** The calls of a definition (parsed JSON, read leniently: a node without a string `config.workflow` makes none). */
export function workflowCalls(def: unknown): WorkflowCall[] {
  const nodes = isRecord(def) && Array.isArray(def['nodes']) ? (def['nodes'] as unknown[]) : [];
  const out: WorkflowCall[] = [];
  nodes.forEach((n, nodeIndex) => {
    if (!isRecord(n) || typeof n['type'] !== 'string' || !CALLING_TYPES.has(n['type']) || !isRecord(n['config'])) return;
    const workflow = n['config']['workflow'];
    const version = n['config']['version'];
    if (typeof workflow !== 'string' || workflow === '') return;
    out.push({ nodeIndex, nodeId: String(n['id']), workflow, ...(typeof version === 'number' ? { version } : {}) });
  });
  return out;
}

/**
 * What a lookup answers for a called workflow: the calls its version (the latest, or the pinned
 * one) makes, or undefined when no such workflow or version is deployed.
 */
export type CallLookup = (workflow: string, version?: number) => WorkflowCall[] | undefined;

/**
 * Problems of the calls `def` (workflow `name`) makes: UNKNOWN_WORKFLOW for a workflow or version
 * not deployed, WORKFLOW_CYCLE for a chain of calls back to `name` (a call of `name` itself
 * included), each naming the node and the chain.
 */
export function checkWorkflowCalls(name: string, def: unknown, lookup: CallLookup): Problem[] {
  const problems: Problem[] = [];
  for (const call of workflowCalls(def)) {
    const path = ['nodes', call.nodeIndex, 'config', 'workflow'];
    const subject = `node ${JSON.stringify(call.nodeId)}`;
    if (call.workflow === name) {
      problems.push({ code: 'WORKFLOW_CYCLE', message: `${subject}: calls its own workflow "${name}"`, nodeId: call.nodeId, path });
      continue;
    }
    const first = lookup(call.workflow, call.version);
    if (first === undefined) {
      const what = call.version === undefined ? `workflow "${call.workflow}" is not deployed` : `workflow "${call.workflow}" has no version ${call.version}`;
      problems.push({ code: 'UNKNOWN_WORKFLOW', message: `${subject}: ${what}`, nodeId: call.nodeId, path: call.version === undefined ? path : ['nodes', call.nodeIndex, 'config', 'version'] });
      continue;
    }
    const chain = cycleFrom(name, call.workflow, first, lookup);
    if (chain) problems.push({ code: 'WORKFLOW_CYCLE', message: `${subject}: workflows call each other in a cycle: ${[name, ...chain].join(' → ')}`, nodeId: call.nodeId, path });
  }
  return problems;
}

/** A chain of calls from `start` (whose calls are `calls`) back to `name`, or undefined. Depth-first, each workflow once. */
function cycleFrom(name: string, start: string, calls: WorkflowCall[], lookup: CallLookup): string[] | undefined {
  const seen = new Set<string>([start]);
  const stack: { workflow: string; calls: WorkflowCall[]; path: string[] }[] = [{ workflow: start, calls, path: [start] }];
  while (stack.length > 0) {
    const top = stack.pop() as { workflow: string; calls: WorkflowCall[]; path: string[] };
    for (const c of top.calls) {
      if (c.workflow === name) return [...top.path, name];
      if (seen.has(c.workflow)) continue;
      seen.add(c.workflow);
      const next = lookup(c.workflow, c.version);
      if (next !== undefined) stack.push({ workflow: c.workflow, calls: next, path: [...top.path, c.workflow] });
    }
  }
  return undefined;
}
