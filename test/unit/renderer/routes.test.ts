// The app's addresses (renderer/src/routes.ts): every route reads back from its own text, names are
// one encoded segment, and an address that names nothing is undefined (issue 15, item 3).
import { describe, expect, it } from 'vitest';
import { formatRoute, parseRoute, type Route } from '../../../renderer/src/routes';

describe('routes', () => {
  const routes: Array<[Route, string]> = [
    [{ view: 'designer' }, '#/designer'],
    [{ view: 'designer', workflow: 'ota-upgrade' }, '#/designer/ota-upgrade'],
    [{ view: 'designer', workflow: 'ota-upgrade', version: 3 }, '#/designer/ota-upgrade/v/3'],
    [{ view: 'designer', workflow: 'ops/nightly run 🎉' }, '#/designer/ops%2Fnightly%20run%20%F0%9F%8E%89'],
    [{ view: 'instances' }, '#/instances'],
    [{ view: 'instances', instance: 42 }, '#/instances/42'],
    [{ view: 'instances', instance: 42, tab: 'history' }, '#/instances/42/history'],
    [{ view: 'instances', instance: 42, tab: 'variables' }, '#/instances/42/variables'],
    [{ view: 'instances', parent: 7 }, '#/instances?parent=7'],
    [{ view: 'instances', instance: 42, parent: 7 }, '#/instances/42?parent=7'],
    [{ view: 'instances', instance: 42, tab: 'history', parent: 7 }, '#/instances/42/history?parent=7'],
    [{ view: 'instances', paused: true }, '#/instances?paused'],
    [{ view: 'instances', instance: 42, parent: 7, paused: true }, '#/instances/42?parent=7&paused'],
    [{ view: 'approvals' }, '#/approvals'],
    [{ view: 'dashboard' }, '#/dashboard'],
    [{ view: 'database' }, '#/database'],
  ];

  it('writes each route as its address, and reads it back', () => {
    for (const [route, text] of routes) {
      expect(formatRoute(route)).toBe(text);
      expect(parseRoute(text)).toEqual(route);
    }
  });

  it('spells one place one way: no timeline tab, a trailing slash or a missing # is read the same', () => {
    expect(formatRoute({ view: 'instances', instance: 7, tab: 'timeline' })).toBe('#/instances/7');
    expect(parseRoute('#/instances/7/timeline')).toEqual({ view: 'instances', instance: 7, tab: 'timeline' });
    expect(parseRoute('/dashboard/')).toEqual({ view: 'dashboard' });
  });

  it('leaves out a malformed or unknown query key of the list (the parent filter is a positive id)', () => {
    expect(parseRoute('#/instances?parent=0')).toEqual({ view: 'instances' });
    expect(parseRoute('#/instances?parent=x&other=1')).toEqual({ view: 'instances' });
    expect(parseRoute('#/instances/?parent=3')).toEqual({ view: 'instances', parent: 3 });
    expect(parseRoute('#/instances?paused=1')).toEqual({ view: 'instances', paused: true });
    expect(parseRoute('#/instances?paused=no')).toEqual({ view: 'instances' });
  });

  it('names nothing for an empty, unknown or malformed address', () => {
    for (const text of ['', '#', '#/', '#/nowhere', '#/instances/0', '#/instances/-1', '#/instances/1.5', '#/instances/x', '#/instances/7/graph', '#/instances/7/history/more', '#/designer/a/v/0', '#/designer/a/v', '#/designer/a/x/2', '#/designer/%E0%A4%A', '#/approvals/3', '#/instances/99999999999999999999']) {
      expect(parseRoute(text), text).toBeUndefined();
    }
  });
});
