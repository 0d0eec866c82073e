import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CounterTally, HistogramTally } from '../../../engine/runtime/metric-tallies';

describe('metric tallies', () => {
  it('expose cumulative buckets (a value on a bound counts in it), sum and count in the Prometheus text', async () => {
    const registry = new Registry();
    const h = new HistogramTally(registry, 'x_seconds', 'X.', [0.001, 0.01], 'type');
    const pass = h.of('pass');
    for (const v of [0.001, 0.003, 10]) pass.observe(v);
    expect(await registry.metrics()).toBe(
      [
        '# HELP x_seconds X.',
        '# TYPE x_seconds histogram',
        'x_seconds_bucket{le="0.001",type="pass"} 1',
        'x_seconds_bucket{le="0.01",type="pass"} 2',
        'x_seconds_bucket{le="+Inf",type="pass"} 3',
        'x_seconds_sum{type="pass"} 10.004',
        'x_seconds_count{type="pass"} 3',
        '',
      ].join('\n'),
    );
  });

  it('count by one or two labels, and a scrape repeated reports the same totals', async () => {
    const registry = new Registry();
    const c = new CounterTally(registry, 'y_total', 'Y.', ['type', 'outcome']);
    c.add('http', 'failed');
    c.add('http', 'failed', 2);
    c.add('pass', 'completed');
    const text = ['# HELP y_total Y.', '# TYPE y_total counter', 'y_total{type="http",outcome="failed"} 3', 'y_total{type="pass",outcome="completed"} 1', ''].join('\n');
    expect(await registry.metrics()).toBe(text);
    expect(await registry.metrics()).toBe(text);
  });
});
