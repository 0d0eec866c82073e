// End to end in Chromium: while a long reader (another connection) holds a read transaction and
// the engine keeps writing, the write-ahead log grows past its bound; the status bar warns
// (`wal-warning`, from `storage:health`), and the warning goes once the reader lets go and the WAL
// is reset (issue 17, item 8).
import Database from 'better-sqlite3';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMonitorApp, waitUntil, type MonitorApp } from '../../helpers/monitor-app';

let app: MonitorApp;
beforeAll(async () => {
  app = await startMonitorApp({ engine: { walLimitBytes: 256 * 1024, synchronous: 'NORMAL' } });
  await app.engine.deploy({ name: 'fill', nodes: [{ id: 'a', type: 'pass' }, { id: 'b', type: 'pass' }], edges: [{ from: 'a', to: 'b' }] });
});
afterAll(async () => {
  await app?.close();
});

describe('the status bar', () => {
  it('warns while the WAL is past its bound, and stops once a reader let go', { timeout: 90_000 }, async () => {
    const { page } = app;
    const warning = page.getByTestId('wal-warning');
    expect(await warning.count()).toBe(0);
    const reader = new Database(path.join(app.work, 'runnel.db'), { readonly: true });
    try {
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM instance').get();
      for (let i = 0; i < 3; i++) await app.api('instance:start', { workflow: 'fill', variables: { pad: 'p'.repeat(300) } });
      await app.engine.startMany('fill', Array.from({ length: 600 }, (_, i) => ({ i, pad: 'p'.repeat(300) })));
      // the bar asks every 10 s
      await waitUntil(() => warning.count(), (n) => n === 1, 'the WAL warning', 30_000);
      expect(await warning.textContent()).toMatch(/^WAL [\d.]+ MiB, above its 0\.3 MiB bound: a long reader holds it$/);
    } finally {
      reader.exec('COMMIT');
      reader.close();
    }
    // A WAL is reset by a write after a checkpoint that found no reader: keep writing a little.
    const writes = setInterval(() => void app.engine.startMany('fill', [{ i: -1 }]).catch(() => undefined), 500);
    try {
      await waitUntil(() => warning.count(), (n) => n === 0, 'the warning gone', 40_000);
    } finally {
      clearInterval(writes);
    }
  });
});
