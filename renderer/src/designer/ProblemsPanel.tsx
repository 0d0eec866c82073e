/**
 * The problems list (`problems-panel`): every live problem (the engine's validator and script
 * syntax), then those the host named when it refused a save; each (`problem-<index>`) selects its
 * node or edge and brings it into view. Collapsible; the count stays in its header.
 */
import { useState } from 'react';
import { useDesigner, useDesignerStore } from './context';

/** The problems strip under the canvas. */
export function ProblemsPanel() {
  const store = useDesignerStore();
  const problems = useDesigner((s) => s.problems);
  const serverProblems = useDesigner((s) => s.serverProblems);
  const typesReady = useDesigner((s) => s.typesStatus === 'ready');
  const [open, setOpen] = useState(true);
  const all = [...problems.map((p) => ({ ...p, from: 'live' as const })), ...serverProblems.map((p) => ({ ...p, from: 'host' as const }))];
  const count = all.length;
  return (
    <section className={`rn-problems${open ? ' open' : ''}${count > 0 ? ' has-problems' : ''}`} data-testid="problems-panel" data-count={count} aria-label="Problems">
      <button type="button" className="rn-problems-head" aria-expanded={open} data-testid="problems-toggle" onClick={() => setOpen(!open)}>
        <span className="rn-problems-title">Problems</span>
        <span className="rn-problems-count" data-testid="problems-count">
          {typesReady ? count : '…'}
        </span>
        <span className="rn-problems-hint">{count === 0 ? (typesReady ? 'The workflow is valid.' : 'Checking…') : 'Click one to go to it. Saving is refused until they are fixed.'}</span>
        <span className="rn-chevron" aria-hidden="true">
          {open ? '▾' : '▸'}
        </span>
      </button>
      {open && count > 0 ? (
        <ol className="rn-problems-list">
          {all.map((p, i) => (
            <li key={`${p.from}-${i}`}>
              <button type="button" className="rn-problem" data-testid={`problem-${i}`} data-from={p.from} data-code={p.code} data-node={p.nodeId} data-edge={p.edgeId} onClick={() => store.getState().focusProblem(p)}>
                <code className="rn-problem-code">{p.code}</code>
                <span className="rn-problem-message">{p.message}</span>
                {p.from === 'host' ? <span className="rn-problem-from">from the host</span> : null}
              </button>
            </li>
          ))}
        </ol>
      ) : null}
    </section>
  );
}
