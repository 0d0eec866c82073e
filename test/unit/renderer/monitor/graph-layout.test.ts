// The instance graph's layout and first view (renderer/src/monitor/graph-layout.ts): saved positions
// kept only where edge labels have room, and a first zoom never under the readable least.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  edgeLabelSize,
  firstViewport,
  graphPositions,
  GRAPH_MIN_FIT_ZOOM,
  GRAPH_NODE,
} from '../../../../renderer/src/monitor/graph-layout';
import type { Workflow } from '../../../../engine/dsl/schema';

const ota = JSON.parse(
  fs.readFileSync(new URL('../../../../examples/ota-upgrade.workflow.json', import.meta.url), 'utf8'),
) as Workflow;

describe('graphPositions', () => {
  it('keeps the designer positions when every label has room between its boxes', () => {
    const wide = {
      ...ota,
      ui: { positions: Object.fromEntries(ota.nodes.map((n, i) => [n.id, { x: i * 400, y: 0 }])) },
    };
    expect(graphPositions(wide).get('download')).toEqual({ x: 400, y: 0 });
  });

  it('lays the flow out anew, with room for a label, when the saved positions cut it', () => {
    // given: the example's positions, 240 px apart: 40 px between 200 px boxes
    expect(ota.ui?.positions?.download).toEqual({ x: 240, y: 0 });
    // when
    const at = graphPositions(ota);
    // then: the labelled edge's boxes are its label's width (and a margin) apart
    const gap = (at.get('download')?.x ?? 0) - (at.get('check')?.x ?? 0) - GRAPH_NODE.width;
    expect(gap).toBeGreaterThanOrEqual(edgeLabelSize('needs the upgrade').width + 16);
    // and the flow still reads left to right in one row
    const xs = ota.nodes.map((n) => at.get(n.id)?.x ?? 0);
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    expect(new Set(ota.nodes.map((n) => at.get(n.id)?.y)).size).toBe(1);
  });
});

describe('firstViewport', () => {
  const row = (n: number) => new Map(Array.from({ length: n }, (_, i) => [`n${i}`, { x: i * 300, y: 0 }]));

  it('centres a graph that fits, at a zoom no larger than 1.1', () => {
    const v = firstViewport(row(2), { width: 1000, height: 350 });
    expect(v.zoom).toBe(1.1);
    expect(v.x + (500 * 1.1) / 2).toBeCloseTo(500);
  });

  it('never shrinks a wide graph below the least zoom: it shows its start', () => {
    const v = firstViewport(row(8), { width: 980, height: 350 });
    expect(v.zoom).toBe(GRAPH_MIN_FIT_ZOOM);
    expect(v.x).toBe(24);
  });

  it('shows the node in focus when the start would leave it out, without scrolling past the end', () => {
    const v = firstViewport(row(8), { width: 980, height: 350 }, 'n4');
    const left = 4 * 300 * v.zoom + v.x;
    expect(left).toBeGreaterThanOrEqual(0);
    expect(left + GRAPH_NODE.width * v.zoom).toBeLessThanOrEqual(980);
    const last = firstViewport(row(8), { width: 980, height: 350 }, 'n7');
    expect((7 * 300 + GRAPH_NODE.width) * last.zoom + last.x).toBe(980 - 24);
  });
});
