/**
 * The node components, one per kind (`http`, `script`, `delay`, `approval`, `pass`, `custom`):
 * a card with the type icon, the name (or id), the id, the key config and badges (retry, timeout,
 * compensation, join, suspend, problems), an input on the left, a normal output on the right and
 * an error output below.
 *
 * Each is memoized and reads from the store only its own problem count and its type's palette
 * entry, so dragging one node of 500 re-renders one card.
 */
import { Handle, Position, type NodeProps } from '@xyflow/react';
import { memo } from 'react';
import { useDesigner } from '../context';
import { BadgeIcon, TypeIcon } from '../icons';
import { badgesOf, configSummary } from '../summary';
import type { ApprovalNode, AppNode, CustomNode, DelayNode, HttpNode, PassNode, ScriptNode } from '../types';

function StepCard({ id, data, selected, kind }: { id: string; data: AppNode['data']; selected: boolean; kind: AppNode['type'] }) {
  const def = data.def;
  const info = useDesigner((s) => s.typeInfo.get(def.type));
  const typesReady = useDesigner((s) => s.typesStatus === 'ready');
  const problems = useDesigner((s) => s.problemsByNode.get(id));
  const readOnly = useDesigner((s) => s.readOnly);
  const unknownType = typesReady && info === undefined;
  const title = typeof def.name === 'string' && def.name !== '' ? def.name : id;
  const summary = configSummary(def);
  const badges = badgesOf(def);
  const classes = ['rn-node', `rn-kind-${kind}`];
  if (selected) classes.push('selected');
  if (problems) classes.push('has-problems');
  return (
    <div className={classes.join(' ')} data-testid={`node-${id}`} data-kind={kind} data-type={def.type} title={problems ? problems.map((p) => p.message).join('\n') : undefined}>
      <Handle type="target" position={Position.Left} id="in" isConnectable={!readOnly} />
      <div className="rn-node-head">
        <span className="rn-node-icon">
          <TypeIcon name={info?.icon} />
        </span>
        <span className="rn-node-title">{title}</span>
        {problems ? (
          <span className="rn-badge rn-badge-problems" data-testid="badge-problems">
            <BadgeIcon kind="problems" />
            {problems.length}
          </span>
        ) : null}
      </div>
      <div className="rn-node-meta">
        <span className="rn-node-type">{unknownType ? `unknown type ${def.type}` : (info?.title ?? def.type)}</span>
        {title !== id ? <code className="rn-node-id">{id}</code> : null}
      </div>
      {summary !== '' ? <div className="rn-node-summary">{summary}</div> : null}
      {badges.length > 0 ? (
        <div className="rn-badges">
          {badges.map((b) => (
            <span key={b.kind} className={`rn-badge rn-badge-${b.kind}`} data-testid={`badge-${b.kind}`} title={b.title}>
              <BadgeIcon kind={b.kind} />
              {b.text}
            </span>
          ))}
        </div>
      ) : null}
      <Handle type="source" position={Position.Right} id="out" isConnectable={!readOnly} title="Output: drag to the next step" />
      <Handle type="source" position={Position.Bottom} id="error" className="rn-error-handle" isConnectable={!readOnly} title="On error: drag to the step that handles a failure" />
    </div>
  );
}

/** An `http` node. */
export const HttpNodeView = memo(function HttpNodeView({ id, data, selected }: NodeProps<HttpNode>) {
  return <StepCard id={id} data={data} selected={selected} kind="http" />;
});

/** A `script` node. */
export const ScriptNodeView = memo(function ScriptNodeView({ id, data, selected }: NodeProps<ScriptNode>) {
  return <StepCard id={id} data={data} selected={selected} kind="script" />;
});

/** A `delay` node. */
export const DelayNodeView = memo(function DelayNodeView({ id, data, selected }: NodeProps<DelayNode>) {
  return <StepCard id={id} data={data} selected={selected} kind="delay" />;
});

/** An `approval` node. */
export const ApprovalNodeView = memo(function ApprovalNodeView({ id, data, selected }: NodeProps<ApprovalNode>) {
  return <StepCard id={id} data={data} selected={selected} kind="approval" />;
});

/** A `pass` node. */
export const PassNodeView = memo(function PassNodeView({ id, data, selected }: NodeProps<PassNode>) {
  return <StepCard id={id} data={data} selected={selected} kind="pass" />;
});

/** A node of a custom type. */
export const CustomNodeView = memo(function CustomNodeView({ id, data, selected }: NodeProps<CustomNode>) {
  return <StepCard id={id} data={data} selected={selected} kind="custom" />;
});
