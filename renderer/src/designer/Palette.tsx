/**
 * The palette: every node type the engine lists (built-in and custom), grouped, searchable, each
 * with its icon and one-line description. Drag one onto the canvas (it lands at the cursor) or
 * click it to add it at the centre of the view.
 *
 * Test ids: `palette`, `palette-search`, `palette-group-<group>`, `palette-item-<type>`.
 */
import { useReactFlow } from '@xyflow/react';
import { useMemo, useState, type DragEvent } from 'react';
import type { NodeTypeInfo } from '../../../engine/api/contract';
import { useDesigner, useDesignerStore } from './context';
import { TypeIcon } from './icons';
import { DEFAULT_NODE_SIZE } from './layout';
import { DND_MIME, useDnD } from './use-dnd';

function matches(t: NodeTypeInfo, q: string): boolean {
  if (q === '') return true;
  const hay = `${t.type} ${t.title} ${t.description} ${t.group}`.toLowerCase();
  return q
    .toLowerCase()
    .split(/\s+/u)
    .every((word) => hay.includes(word));
}

/** The palette column. */
export function Palette() {
  const types = useDesigner((s) => s.types);
  const status = useDesigner((s) => s.typesStatus);
  const readOnly = useDesigner((s) => s.readOnly);
  const store = useDesignerStore();
  const { setType, canvasRef } = useDnD();
  const { screenToFlowPosition } = useReactFlow();
  const [query, setQuery] = useState('');

  const groups = useMemo(() => {
    const out = new Map<string, NodeTypeInfo[]>();
    for (const t of types) {
      if (!matches(t, query.trim())) continue;
      const list = out.get(t.group);
      if (list) list.push(t);
      else out.set(t.group, [t]);
    }
    return [...out];
  }, [types, query]);

  const onDragStart = (event: DragEvent, type: string): void => {
    setType(type);
    event.dataTransfer.setData(DND_MIME, type);
    event.dataTransfer.setData('text/plain', type);
    event.dataTransfer.effectAllowed = 'move';
  };

  const addAtCentre = (type: string): void => {
    const rect = canvasRef.current?.getBoundingClientRect();
    const centre = rect ? screenToFlowPosition({ x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 }) : { x: 0, y: 0 };
    store.getState().addNode(type, { x: centre.x - DEFAULT_NODE_SIZE.width / 2, y: centre.y - DEFAULT_NODE_SIZE.height / 2 });
  };

  return (
    <aside className="rn-palette" data-testid="palette" aria-label="Node types">
      <input
        type="search"
        className="rn-palette-search"
        placeholder="Search node types…"
        aria-label="Search node types"
        data-testid="palette-search"
        value={query}
        onChange={(e) => setQuery(e.target.value)}
      />
      {status === 'loading' ? <p className="muted rn-small">Loading node types…</p> : null}
      {status === 'ready' && groups.length === 0 ? <p className="muted rn-small">No node type matches “{query}”.</p> : null}
      {groups.map(([group, list]) => (
        <section key={group} className="rn-palette-group" data-testid={`palette-group-${group}`}>
          <h3>{group}</h3>
          {list.map((t) => (
            <button
              key={t.type}
              type="button"
              className="rn-palette-item"
              data-testid={`palette-item-${t.type}`}
              draggable={!readOnly}
              disabled={readOnly}
              title={`${t.description}\nDrag onto the canvas, or click to add at the centre.`}
              onDragStart={(e) => onDragStart(e, t.type)}
              onDragEnd={() => setType(undefined)}
              onClick={() => addAtCentre(t.type)}
            >
              <span className={`rn-palette-icon rn-kind-${t.type}`}>
                <TypeIcon name={t.icon} size={18} />
              </span>
              <span className="rn-palette-text">
                <span className="rn-palette-title">{t.title}</span>
                <span className="rn-palette-desc">{t.description}</span>
              </span>
            </button>
          ))}
        </section>
      ))}
    </aside>
  );
}
