/**
 * Comparing designer documents cheaply.
 *
 * The store keeps nodes, edges and their `data` immutable, so a change makes new objects and
 * "the same" can be decided by reference on `data` plus the few fields React Flow itself rewrites
 * (position). Selection, measured size and drag flags are not part of the document: a selection
 * change is no undo step and does not make the workflow unsaved.
 */
import type { AppNode, DesignerDoc, FlowEdge } from './types';

/** The document part of any state holding one (undo/redo snapshots are these). */
export function docOf(s: DesignerDoc): DesignerDoc {
  return { meta: s.meta, nodes: s.nodes, edges: s.edges };
}

function sameEdges(a: readonly FlowEdge[], b: readonly FlowEdge[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (!x || !y || x.id !== y.id || x.source !== y.source || x.target !== y.target || x.data !== y.data) return false;
  }
  return true;
}

function sameNodes(a: readonly AppNode[], b: readonly AppNode[], positions: boolean): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (!x || !y || x.id !== y.id || x.data !== y.data) return false;
    if (positions && (x.position.x !== y.position.x || x.position.y !== y.position.y)) return false;
  }
  return true;
}

/** Whether two documents are the same drawing (positions included). O(n) at worst, O(1) when unchanged. */
export function docEqual(a: DesignerDoc, b: DesignerDoc): boolean {
  return a.meta === b.meta && sameNodes(a.nodes, b.nodes, true) && sameEdges(a.edges, b.edges);
}

/** Whether two documents mean the same workflow (positions ignored): validation need not run again. */
export function semanticEqual(a: DesignerDoc, b: DesignerDoc): boolean {
  return a.meta === b.meta && sameNodes(a.nodes, b.nodes, false) && sameEdges(a.edges, b.edges);
}
