/**
 * A workflow version prepared for the runtime: nodes by id with their resolved retry policy,
 * node type, and incoming/outgoing edges. Versions are immutable, so one is compiled once per
 * process and cached by workflow id.
 */
import { EngineError } from '../errors';
import { edgeId, resolveRetry, type ResolvedRetryPolicy, type Workflow, type WorkflowNode } from '../dsl/schema';
import type { NodeType } from '../nodes/types';

/** An edge with its id resolved. */
export interface CompiledEdge {
  id: string;
  from: string;
  to: string;
  when: string | undefined;
  on: 'success' | 'error';
}

/** A node ready to run. */
export interface CompiledNode {
  id: string;
  def: WorkflowNode;
  type: NodeType<unknown>;
  retry: ResolvedRetryPolicy;
  onFailure: 'fail' | 'suspend';
  join: 'any' | 'all';
  incoming: CompiledEdge[];
  /** Success edges leaving the node. */
  outgoing: CompiledEdge[];
  /** Error edges leaving the node. */
  errorOut: CompiledEdge[];
  compensate: { type: NodeType<unknown>; retry: ResolvedRetryPolicy } | undefined;
}

/** A workflow version prepared for the runtime. */
export interface CompiledWorkflow {
  id: number;
  name: string;
  version: number;
  def: Workflow;
  nodes: Map<string, CompiledNode>;
  /** Nodes with no incoming edge, in DSL order. */
  entries: string[];
  /** Whether any expression mentions `$steps` or any node is a script (which sees steps). */
  usesSteps: boolean;
}

/**
 * Compiles a validated workflow for the runtime.
 *
 * @throws EngineError INVALID_WORKFLOW if a node type is not registered in this process (a
 * workflow saved by a process with a custom type that this one lacks).
 */
export function compileWorkflow(
  id: number,
  version: number,
  def: Workflow,
  lookup: (type: string) => NodeType<unknown> | undefined,
): CompiledWorkflow {
  const nodes = new Map<string, CompiledNode>();
  const typeOf = (t: string, nodeId: string): NodeType<unknown> => {
    const found = lookup(t);
    if (!found) {
      throw new EngineError('INVALID_WORKFLOW', `node "${nodeId}": type "${t}" is not registered in this engine`);
    }
    return found;
  };
  for (const n of def.nodes) {
    const type = typeOf(n.type, n.id);
    // Precedence: node, then the type's own defaults (a delay or an approval is not retried
    // because the workflow retries its HTTP calls), then workflow, then the engine's.
    const retry = resolveRetry(n.retry, undefined, { ...resolveRetry(def.retry, undefined), ...type.defaultRetry });
    let compensate: CompiledNode['compensate'];
    if (n.compensate) {
      const ct = typeOf(n.compensate.type, n.id);
      compensate = { type: ct, retry: resolveRetry(n.compensate.retry, undefined, { ...resolveRetry(def.retry, undefined), ...ct.defaultRetry }) };
    }
    nodes.set(n.id, {
      id: n.id,
      def: n,
      type,
      retry,
      onFailure: n.onFailure ?? def.onFailure ?? 'fail',
      join: n.join ?? 'any',
      incoming: [],
      outgoing: [],
      errorOut: [],
      compensate,
    });
  }
  for (const e of def.edges) {
    const edge: CompiledEdge = { id: edgeId(e), from: e.from, to: e.to, when: e.when, on: e.on ?? 'success' };
    const from = nodes.get(e.from);
    const to = nodes.get(e.to);
    if (!from || !to) throw new EngineError('INVALID_WORKFLOW', `edge "${edge.id}" names an unknown node`);
    (edge.on === 'error' ? from.errorOut : from.outgoing).push(edge);
    to.incoming.push(edge);
  }
  const text = JSON.stringify(def.nodes) + JSON.stringify(def.edges);
  return {
    id,
    name: def.name,
    version,
    def,
    nodes,
    entries: def.nodes.filter((n) => nodes.get(n.id)?.incoming.length === 0).map((n) => n.id),
    usesSteps: text.includes('$steps') || def.nodes.some((n) => n.type === 'script'),
  };
}
