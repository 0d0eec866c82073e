/**
 * What the metrics cost a transition: the same drain of linear 3-node instances (FULL), rounds
 * alternating between an engine without listeners and one with {@link EngineMetrics} attached,
 * in one process on fresh files, so the machine's drift hits both alike.
 *
 * `node --import tsx bench/metrics-overhead.ts [instances=3000] [rounds=4]` prints each round's
 * transitions per second and CPU time per transition (the process's, all threads), and the median
 * of each side: on a shared machine the CPU time moves less than the rate.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EngineMetrics } from '../engine/api/index';
import { openEngine } from './engine-run';
import { benchVariables, LINEAR, TRANSITIONS_PER_INSTANCE } from './workflows';

const instances = Number(process.argv[2] ?? 3000);
const rounds = Number(process.argv[3] ?? 4);

/** One drain; returns transitions per second and the process's CPU time per transition, µs. */
async function drain(withMetrics: boolean): Promise<{ rate: number; cpuUs: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'runnel-metrics-bench-'));
  const engine = openEngine(path.join(dir, 'bench.db'), 'FULL');
  const metrics = withMetrics ? new EngineMetrics(engine) : undefined;
  try {
    await engine.deploy(LINEAR);
    for (let i = 0; i < instances; i += 1000) await engine.startMany(LINEAR.name, Array.from({ length: Math.min(1000, instances - i) }, (_, j) => benchVariables(i + j)));
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    await engine.runUntil(async () => (await engine.countByStatus()).COMPLETED === instances, 600_000, { pollMs: 2 });
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    if (metrics) await metrics.text(); // a scrape, so the registry is exercised end to end
    const transitions = instances * TRANSITIONS_PER_INSTANCE['bench-linear'];
    return { rate: transitions / seconds, cpuUs: (cpu.user + cpu.system) / transitions };
  } finally {
    metrics?.close();
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
};

const plain: number[] = [];
const measured: number[] = [];
const plainCpu: number[] = [];
const measuredCpu: number[] = [];
await drain(false); // warm-up: JIT and page cache
for (let r = 0; r < rounds; r++) {
  for (const withMetrics of r % 2 === 0 ? [false, true] : [true, false]) {
    const { rate, cpuUs } = await drain(withMetrics);
    (withMetrics ? measured : plain).push(rate);
    (withMetrics ? measuredCpu : plainCpu).push(cpuUs);
    console.log(`round ${r + 1} ${withMetrics ? 'with metrics   ' : 'without metrics'} ${rate.toFixed(0)} trans/s, ${cpuUs.toFixed(1)} µs CPU a transition`);
  }
}
const a = median(plain);
const b = median(measured);
console.log(`median without ${a.toFixed(0)} trans/s, with ${b.toFixed(0)} trans/s: ${((b / a - 1) * 100).toFixed(1)}%`);
const ca = median(plainCpu);
const cb = median(measuredCpu);
console.log(`median CPU a transition without ${ca.toFixed(1)} µs, with ${cb.toFixed(1)} µs: ${(cb - ca).toFixed(1)} µs (${((cb / ca - 1) * 100).toFixed(1)}%)`);
