/**
 * The one edge component: a bezier with an arrow; error edges red and dashed, leaving from the
 * node's bottom output; a label showing the edge's `label` or its `when` condition; edges with
 * problems drawn in the problem colour.
 */
import { BaseEdge, EdgeLabelRenderer, getBezierPath, type EdgeProps } from '@xyflow/react';
import { memo } from 'react';
import { useDesigner } from '../context';
import type { FlowEdge } from '../types';

function shortText(text: string, max = 42): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Room for a label between two nodes side by side (it wraps to two lines), px. */
function labelWidth(sourceX: number, targetX: number): number {
  const gap = Math.abs(targetX - sourceX) - 14;
  return Math.max(64, Math.min(220, gap));
}

/** A workflow edge. */
export const FlowEdgeView = memo(function FlowEdgeView(props: EdgeProps<FlowEdge>) {
  const { id, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, data, selected } = props;
  const problems = useDesigner((s) => s.problemsByEdge.get(id));
  const [path, labelX, labelY] = getBezierPath({ sourceX, sourceY, sourcePosition, targetX, targetY, targetPosition });
  const error = data?.on === 'error';
  const classes = ['rn-edge'];
  if (error) classes.push('rn-edge-error');
  if (problems) classes.push('rn-edge-problem');
  if (selected) classes.push('selected');
  const when = data?.when;
  const text = data?.label ?? (when !== undefined ? shortText(when, 60) : error ? 'on error' : undefined);
  return (
    <>
      <BaseEdge id={id} path={path} className={classes.join(' ')} markerEnd={error ? 'url(#rn-arrow-error)' : problems ? 'url(#rn-arrow-problem)' : 'url(#rn-arrow)'} interactionWidth={16} />
      {text !== undefined ? (
        <EdgeLabelRenderer>
          <div
            className={`rn-edge-label nodrag nopan${error ? ' error' : ''}${when !== undefined && data?.label === undefined ? ' code' : ''}${selected ? ' selected' : ''}`}
            style={{ transform: `translate(-50%, -50%) translate(${labelX}px, ${labelY}px)`, maxWidth: labelWidth(sourceX, targetX) }}
            data-testid={`edge-label-${id}`}
            title={when !== undefined ? `when ${when}` : undefined}
          >
            {text}
          </div>
        </EdgeLabelRenderer>
      ) : null}
    </>
  );
});
