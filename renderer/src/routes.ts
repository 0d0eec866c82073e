/**
 * The app's routes: what the address says is on screen, as data, and the text of an address.
 *
 * Hash routes (`#/instances/42/history`), not history routes: the desktop app loads
 * `app://runnel/index.html` through a protocol that serves files only, the build uses relative
 * asset URLs (`base: './'`) that a deep path would break, and the browser host's token is taken
 * from the query (`?token=`), which a hash leaves alone. The same routes work in both hosts and in
 * Vite's dev server, and a reload asks the host for the same `index.html`.
 *
 * | address | shows |
 * |---|---|
 * | `#/designer` | the Designer on what it has (a new drawing when it never opened one) |
 * | `#/designer/<workflow>` | the Designer on the workflow's latest version |
 * | `#/designer/<workflow>/v/<n>` | the Designer on version n (read-only unless it is the latest) |
 * | `#/instances` | the instance list |
 * | `#/instances?parent=<id>` | the instance list, only the child instances of instance id |
 * | `#/instances?paused` | the instance list, only paused instances (with `parent`: `?parent=<id>&paused`) |
 * | `#/instances/<id>` | instance id, its timeline tab |
 * | `#/instances/<id>/<tab>` | instance id, tab `timeline`, `history` or `variables` |
 * | `#/approvals`, `#/dashboard`, `#/database` | those views |
 *
 * A workflow name is one path segment, percent-encoded (names may hold `/`, spaces, emoji). The
 * list's parent and paused filters stay in the address while an instance is open
 * (`#/instances/<id>?parent=<p>`), so Back from the detail comes to the same filtered list.
 * Pure: no DOM, so unit tests cover it; `navigation.ts` binds it to the window and the stores.
 */
/** The tabs of an instance's detail. */
export const INSTANCE_TABS = ['timeline', 'history', 'variables'] as const;

/** A tab of an instance's detail. */
export type InstanceTab = (typeof INSTANCE_TABS)[number];

/** Where the app is: one of the routes in the module comment. */
export type Route =
  | { view: 'designer'; workflow?: string; version?: number }
  | { view: 'instances'; instance?: number; tab?: InstanceTab; parent?: number; paused?: true }
  | { view: 'approvals' }
  | { view: 'dashboard' }
  | { view: 'database' };

function positiveInt(text: string | undefined): number | undefined {
  if (text === undefined || !/^[1-9]\d{0,15}$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

function decode(segment: string): string | undefined {
  try {
    const s = decodeURIComponent(segment);
    return s === '' ? undefined : s;
  } catch {
    return undefined;
  }
}

/**
 * The route of an address's hash (`#/…`, with or without the `#`); undefined when it names no
 * route (empty, unknown view, a malformed id or version), which the caller replaces by a default.
 */
export function parseRoute(hash: string): Route | undefined {
  const [path = '', query = ''] = hash.replace(/^#/, '').split('?', 2);
  if (!path.startsWith('/')) return undefined;
  const parts = path.slice(1).split('/');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  const [view, a, b, c, ...rest] = parts;
  if (rest.length > 0) return undefined;
  switch (view) {
    case 'designer': {
      if (a === undefined) return { view };
      const workflow = decode(a);
      if (workflow === undefined) return undefined;
      if (b === undefined) return { view, workflow };
      const version = positiveInt(c);
      return b === 'v' && version !== undefined ? { view, workflow, version } : undefined;
    }
    case 'instances': {
      // An unknown or malformed query key is left out (the address is then rewritten without it).
      const params = new URLSearchParams(query);
      const parent = positiveInt(params.get('parent') ?? undefined);
      // `paused` alone (or `paused=1`); any other value is malformed and left out.
      const pausedText = params.get('paused');
      const paused = pausedText === '' || pausedText === '1';
      const filter = { ...(parent === undefined ? {} : { parent }), ...(paused ? { paused: true as const } : {}) };
      if (a === undefined) return { view, ...filter };
      const instance = positiveInt(a);
      if (instance === undefined || c !== undefined) return undefined;
      if (b === undefined) return { view, instance, ...filter };
      return (INSTANCE_TABS as readonly string[]).includes(b) ? { view, instance, tab: b as InstanceTab, ...filter } : undefined;
    }
    case 'approvals':
    case 'dashboard':
    case 'database':
      return a === undefined ? { view } : undefined;
    default:
      return undefined;
  }
}

/**
 * The hash of `route` (`#/…`), the canonical spelling: the timeline tab and a missing version
 * are left out, so one place has one address.
 */
export function formatRoute(route: Route): string {
  switch (route.view) {
    case 'designer':
      if (route.workflow === undefined) return '#/designer';
      return `#/designer/${encodeURIComponent(route.workflow)}${route.version === undefined ? '' : `/v/${route.version}`}`;
    case 'instances': {
      const keys = [
        ...(route.parent === undefined ? [] : [`parent=${route.parent}`]),
        ...(route.paused === true ? ['paused'] : []),
      ];
      const query = keys.length === 0 ? '' : `?${keys.join('&')}`;
      if (route.instance === undefined) return `#/instances${query}`;
      return `#/instances/${route.instance}${route.tab === undefined || route.tab === 'timeline' ? '' : `/${route.tab}`}${query}`;
    }
    case 'approvals':
    case 'dashboard':
    case 'database':
      return `#/${route.view}`;
  }
}
