/**
 * Time travel's patches (engine/store/history-state.ts): a diff applied to the state before gives
 * the state after, for values that JSON merge patches get wrong (null, removed keys), outputs
 * referenced from variables, and patches composed.
 */
import { describe, expect, it } from 'vitest';
import { applyState, composePatches, decodeStatus, diffState, encodeStatus, foldStates, JsonText, type Snapshot, type StateDoc } from '../../../engine/store/history-state';

const before: StateDoc = {
  instance: { s: 'R', b: 5 },
  variables: { keep: 1, gone: 'x', nulled: 3, nested: { a: 1, b: [1, 2] } },
  nodes: { a: { s: 'R', a: 1, l: 3 }, b: { s: 'P', l: 1, i: 1 } },
};
const after: StateDoc = {
  instance: { s: 'C', b: 5, f: 90 },
  variables: { keep: 1, nulled: null, nested: { a: 1, b: [1, 2, 3] }, result: { total: 42, lines: ['x', 'y'] } },
  nodes: { a: { s: 'C', a: 1, l: 3, o: [{ total: 42, lines: ['x', 'y'] }], f: 90 }, b: { s: 'Y', l: 1, t: 1 }, c: { s: 'P', l: 2, o: ['text'] } },
};

describe('history state patches', () => {
  it('given two states, when diffed and applied, then the state after comes back, null values and removed keys included', () => {
    const patch = diffState(before, after);
    expect(patch).toBeDefined();
    expect(applyState(before, patch!)).toEqual(after);
    // only what changed is stored: `keep` and the unchanged `b` start time are absent
    expect(patch!.v).not.toHaveProperty('keep');
    expect(patch!.i).toEqual({ s: 'C', f: 90 });
    expect(patch!.v?.gone).toBeNull();
    expect(patch!.v?.nulled).toEqual([null]);
    expect(patch!.n?.b).toEqual({ s: 'Y', i: null, t: 1 });
  });

  it('a variable equal to an output set in the same patch refers to its node instead of repeating it', () => {
    const patch = diffState(before, after)!;
    expect(patch.v?.result).toBe('a');
    expect(JSON.stringify(patch).split('"lines"').length - 1).toBe(1);
  });

  it('unchanged states give no patch', () => {
    expect(diffState(after, structuredClone(after))).toBeUndefined();
  });

  it('composed patches do what both do in turn, a reference to an output the second changes resolved first', () => {
    const mid: StateDoc = structuredClone(after);
    const third: StateDoc = {
      ...structuredClone(after),
      variables: { ...after.variables, keep: 2 },
      nodes: { ...after.nodes, a: { s: 'K', a: 1, l: 3, o: [{ other: true }], f: 90 } },
    };
    delete third.instance.f;
    const p1 = diffState(before, mid)!;
    const p2 = diffState(mid, third)!;
    expect(applyState(before, composePatches(p1, p2))).toEqual(third);
    expect(foldStates([diffState(foldStates([]), before)!, p1, p2])).toEqual(third);
  });

  it('a patch that begins the variables at the start variables (s: 1) folds over them, and composes either way round', () => {
    const start = { order: 'o-1', customer: { id: 7 } };
    // the creating transaction's patch: the start variables are referred to, one set over them
    const created = { s: 1 as const, i: { s: 'R' }, v: { extra: [true] }, n: { a: { s: 'R', a: 1, l: 1 } } };
    const first = foldStates([created], start);
    expect(first.variables).toEqual({ order: 'o-1', customer: { id: 7 }, extra: true });
    const later = { v: { customer: null, total: [3] } };
    expect(foldStates([created, later], start).variables).toEqual({ order: 'o-1', extra: true, total: 3 });
    // a pending patch composed before it (its variables overwritten) or after it (kept)
    expect(foldStates([composePatches({ v: { junk: [1] } }, created)], start)).toEqual(first);
    expect(foldStates([composePatches(created, later)], start)).toEqual(foldStates([created, later], start));
  });

  it('variables named like Object.prototype members (toString, constructor) are set and removed like any other', () => {
    const a: StateDoc = { instance: {}, variables: { toString: 'x', keep: 1 }, nodes: {} };
    const b: StateDoc = { instance: {}, variables: { constructor: 2, keep: 1 }, nodes: {} };
    const patch = diffState(a, b)!;
    expect(patch.v).toEqual({ constructor: [2], toString: null });
    expect(applyState(a, patch).variables).toEqual({ constructor: 2, keep: 1 });
  });

  it('statuses are stored as one letter and read back by name', () => {
    for (const s of ['PENDING', 'READY', 'RUNNING', 'WAITING', 'RETRYING', 'SUSPENDED', 'COMPLETED', 'FAILED', 'SKIPPED', 'COMPENSATING', 'COMPENSATED', 'CANCELLED']) {
      expect(encodeStatus(s)).toHaveLength(1);
      expect(decodeStatus(encodeStatus(s))).toBe(s);
    }
    expect(decodeStatus(encodeStatus('PAUSED_SOMEDAY'))).toBe('PAUSED_SOMEDAY');
  });

  it('a snapshot whose JSON columns are still text gives the same patch as the parsed state', () => {
    const asText = (d: StateDoc): Snapshot => ({
      createdAt: 0,
      instance: d.instance,
      variables: new JsonText(JSON.stringify(d.variables)),
      nodes: Object.fromEntries(Object.entries(d.nodes).map(([id, n]) => [id, { ...n, ...(n.o ? { o: new JsonText(JSON.stringify(n.o)) } : {}) }])),
    });
    expect(diffState(asText(before), asText(after))).toEqual(diffState(before, after));
    expect(diffState(asText(after), asText(after))).toBeUndefined();
  });
});
