/**
 * The Designer's one store (React Flow's state-management guide): the drawn workflow as canvas
 * nodes and edges, with every edit an action, undo/redo over the drawing (zundo), live validation
 * with the engine's own validator, and the workflow's versions through the API contract.
 *
 * Undo/redo tracks only the document (`meta`, `nodes`, `edges`), compared by {@link docEqual}: a
 * selection or a measured size is no step. A drag, or typing in one field, is one step
 * (`beginBatch` / `endBatch`). Deleting a node takes its edges in the same step.
 *
 * A store creator apart from hooks: tests build fresh stores with a fake `invoke`
 * (`analyzeDelayMs: 0` validates synchronously).
 */
import { applyEdgeChanges, applyNodeChanges, type Connection, type EdgeChange, type NodeChange } from '@xyflow/react';
import { temporal, type TemporalState } from 'zundo';
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { ApiError, InstanceState, NodeTypeInfo, Problem, Result } from '../../../engine/api/contract';
import type { TypeCatalog, WorkflowInput } from '../../../engine/dsl';
import type { ApiClient } from '../api/client';
import { dslEdgeId, fromDefinition, makeEdge, makeNode, readWorkflowFile, sourceHandleOf, toDefinition } from '../designer/convert';
import { docEqual, docOf, semanticEqual } from '../designer/doc';
import { connectionRefusal } from '../designer/graph-rules';
import { freshId, idProblem } from '../designer/ids';
import { autoLayout, GRID } from '../designer/layout';
import { kindOf, type AppNode, type DesignerDoc, type FlowEdge, type FlowEdgeData, type NodeDef, type WorkflowMeta } from '../designer/types';
import { catalogFrom, designerProblems, type DesignerProblem } from '../designer/validation';
import type { LoadStatus, WorkflowsState } from './workflows-store';

/** The saved workflow the designer shows. */
export interface SavedRef {
  name: string;
  /** The version on the canvas (or the one the canvas was last saved as). */
  version: number;
  /** The workflow's latest version. */
  latest: number;
}

/** A status line for the toolbar: results of save, import, rename, … */
export interface DesignerMessage {
  kind: 'info' | 'error';
  text: string;
  seq: number;
}

/** A request for the canvas to bring something into view (a clicked problem, a pasted node). */
export interface FocusRequest {
  kind: 'node' | 'edge' | 'workflow';
  id?: string;
  seq: number;
}

/** What the clipboard holds: copied nodes and the edges between them. */
interface Clipboard {
  nodes: Array<{ id: string; def: NodeDef; position: { x: number; y: number } }>;
  edges: Array<{ source: string; target: string; data: FlowEdgeData }>;
  pastes: number;
}

/** State and actions of the designer store. */
export interface DesignerState extends DesignerDoc {
  /** The palette (`node:types`), in registration order. */
  types: NodeTypeInfo[];
  /** The palette by type name. */
  typeInfo: ReadonlyMap<string, NodeTypeInfo>;
  typesStatus: LoadStatus;
  catalog: TypeCatalog | undefined;
  /** The saved workflow on the canvas; undefined for a new draft never saved. */
  source: SavedRef | undefined;
  /** An earlier version is shown: nothing can change (restore it as a new version instead). */
  readOnly: boolean;
  /** The workflow's versions, newest first. */
  versions: Array<{ version: number; createdAt: number }>;
  /** A workflow is being opened. */
  loading: boolean;
  /** The drawing differs from what was last opened or saved. */
  dirty: boolean;
  /** Live problems (the engine's validator run here), in validation order. */
  problems: DesignerProblem[];
  /**
   * Problems the host named that the live check did not: from its `workflow:validate` after the
   * last change (custom types' own checks, Ajv's compile of the input schema) or from a refused
   * save. Cleared by the next change until the host answers again.
   */
  serverProblems: Problem[];
  /** Problems (live and the host's) by node id. */
  problemsByNode: ReadonlyMap<string, DesignerProblem[]>;
  /** Problems (live and the host's) by canvas edge id. */
  problemsByEdge: ReadonlyMap<string, DesignerProblem[]>;
  /** Whether a save (or rename, duplicate, delete, run) call is in flight. */
  busy: boolean;
  message: DesignerMessage | undefined;
  /** The last refused connection's reason (shown in place for a few seconds). */
  refusal: { text: string; seq: number } | undefined;
  focus: FocusRequest | undefined;
  /** Increases when the canvas should fit the whole drawing into view. */
  fitSeq: number;
  /** An app-menu command for the Designer view (new, import, export), handled there. */
  request: { kind: DesignerRequest; seq: number } | undefined;
  /**
   * The name a new draft gave itself (`untitled`, `untitled2`, …) while nobody has chosen one;
   * undefined for anything opened, imported or saved. See {@link DesignerState.needsName}.
   */
  autoName: string | undefined;

  /** Loads the palette (once; again after a failure). */
  loadTypes(): Promise<void>;
  /** A new empty draft named `name` (default: a free `untitled` name). History is cleared. */
  newWorkflow(name?: string): void;
  /** Opens a saved workflow (its latest version, or `version` read-only). */
  open(name: string, version?: number): Promise<boolean>;
  /**
   * Reads a workflow file's text (JSON or YAML) onto the canvas as an unsaved draft. When a
   * workflow of that name exists, saving makes a new version of it.
   */
  importText(text: string, fileName?: string): { ok: true } | { ok: false; message: string };
  /** The drawing as a DSL definition with `ui.positions`. */
  exportDefinition(): WorkflowInput;
  /** The drawing as a JSON file (the same format `workflow:export` writes). */
  exportFile(): { fileName: string; text: string };
  /** Saves a new version (refused while there are problems). True when saved. */
  save(): Promise<boolean>;
  /**
   * Whether a Save must first ask for a name: a draft never saved that still has the name it gave
   * itself (the view then asks instead of saving "untitled").
   */
  needsName(): boolean;
  /**
   * Names the draft `name` and saves it. Returns why the name is refused (empty, too long,
   * control characters, taken), else undefined once the save was tried (it reports as `save` does).
   */
  nameAndSave(name: string): Promise<string | undefined>;
  /** Saves the earlier version on the canvas as the new latest version. */
  restoreVersion(): Promise<boolean>;
  /** Renames the workflow (a draft: its name; a saved one: every version). Returns an error text. */
  rename(newName: string): Promise<string | undefined>;
  /** Saves the drawing as a new workflow `newName` and opens it. Returns an error text. */
  duplicate(newName: string): Promise<string | undefined>;
  /** Deletes the saved workflow (refused while instances are live), or discards a draft. */
  deleteWorkflow(): Promise<boolean>;
  /**
   * Starts an instance of the version on the canvas (as saved); with `test`, a test run with
   * those pinned results by node id (see `instance:start`). A refusal is the host's error as
   * data, for the Run dialog to show in place (no toast as well); `INVALID_STATE` when nothing
   * saved is open or the designer is busy.
   */
  run(variables: Record<string, unknown> | undefined, test?: { pins: Record<string, unknown> }): Promise<Result<InstanceState>>;

  onNodesChange(changes: NodeChange<AppNode>[]): void;
  onEdgesChange(changes: EdgeChange<FlowEdge>[]): void;
  /** Draws an edge (refused, with the reason in `refusal`, when the rules say no). */
  onConnect(connection: Connection): void;
  /** Why `connection` may not be drawn, or undefined when it may. */
  refusalFor(connection: Pick<Connection, 'source' | 'target' | 'sourceHandle'>): string | undefined;
  /** Shows a refusal reason in place. */
  refuse(text: string): void;

  /** Adds a node of `type` at `position` (snapped; nudged off an occupied spot); selects it. */
  addNode(type: string, position: { x: number; y: number }): string | undefined;
  /** Deletes the selected nodes with every edge they touch, and the selected edges: one step. */
  deleteSelection(): void;
  copySelection(): number;
  /** Pastes the clipboard with fresh ids, offset from the originals; selects the copies. */
  paste(): string[];
  /** Copies and pastes the selection in one step (the clipboard is left alone). */
  duplicateSelection(): string[];
  selectAll(): void;
  /** Selects exactly one node or edge (or nothing). */
  selectOnly(kind: 'node' | 'edge' | 'none', id?: string): void;

  /** Replaces a node's definition with `update(def)`. */
  updateNode(id: string, update: (def: NodeDef) => NodeDef): void;
  /** Renames a node; every edge follows. Returns why not, when refused. */
  renameNode(id: string, newId: string): string | undefined;
  /** Replaces an edge's data with `update(data)` (its kind moves its source handle). */
  updateEdge(canvasId: string, update: (data: FlowEdgeData) => FlowEdgeData): void;
  /** Replaces the workflow-level fields with `update(meta)`. */
  updateMeta(update: (meta: WorkflowMeta) => WorkflowMeta): void;
  /** Auto-layout (dagre), one undo step. */
  layout(): void;

  undo(): void;
  redo(): void;
  /** Starts grouping changes into one undo step (a drag). Nests; each needs its `endBatch`. */
  beginBatch(): void;
  /** Ends a group started by `beginBatch`. */
  endBatch(): void;
  /**
   * Starts an edit session in the properties panel: changes until {@link editEnd} are one undo
   * step (typing in one field). Does not nest: a new session ends the open one, and so does any
   * action on the canvas (a field that disappears while focused never reports its blur).
   */
  editStart(): void;
  /** Ends the open edit session, if any. */
  editEnd(): void;
  /** Validates now (normally debounced after each change). */
  analyzeNow(): void;
  /** Selects a problem's node or edge and brings it into view. */
  focusProblem(problem: Pick<Problem, 'nodeId' | 'edgeId'>): void;
  setMessage(kind: DesignerMessage['kind'], text: string): void;
  /** Asks the Designer view for `kind` (from the app menu; the view guards unsaved changes). */
  ask(kind: DesignerRequest): void;
  clearMessage(): void;
}

/** What the app menu can ask of the Designer view. */
export type DesignerRequest = 'new' | 'import' | 'export';

/** The designer store with its undo history (`store.temporal`). */
export type DesignerStore = StoreApi<DesignerState> & { temporal: StoreApi<TemporalState<DesignerDoc>> };

/** What the designer store calls. */
export interface DesignerDeps {
  api: Pick<ApiClient, 'invoke'>;
  /** The sidebar's store: refreshed and re-selected after save, rename, duplicate and delete. */
  workflows?: StoreApi<WorkflowsState>;
  /** Debounce of live validation after a change, ms (default 120; 0 validates synchronously). */
  analyzeDelayMs?: number;
  /** How long after the live check the host's `workflow:validate` is asked, ms (default 400). */
  hostCheckDelayMs?: number;
  /**
   * Takes back the toast of a failed call on `channel` that the designer shows itself (its
   * message line, the Problems panel): the UI store's `claimToast`.
   */
  claimError?: (channel: string) => void;
}

/** Most undo steps kept. */
export const UNDO_LIMIT = 200;
/** How far each paste moves copies from their originals, px. */
const PASTE_OFFSET = 40;

const EMPTY_MAP: ReadonlyMap<string, DesignerProblem[]> = new Map();

/** A file-name-safe form of a workflow name (as the host's `workflow:export` makes it). */
export function exportFileName(name: string): string {
  const safe = name
    // eslint-disable-next-line no-control-regex -- control characters are what it removes
    .replace(/[\u0000-\u001f<>:"/\\|?*]+/g, '_')
    .replace(/^\.+/, '_')
    .trim();
  return `${safe === '' ? 'workflow' : safe.slice(0, 150)}.workflow.json`;
}

/**
 * A refusal as one line: for INVALID_WORKFLOW the number of problems and the first (the list is
 * in the Problems panel), else the error's first line.
 */
export function refusalText(error: ApiError): string {
  const details = error.details;
  if (error.code === 'INVALID_WORKFLOW' && Array.isArray(details) && details.length > 0) {
    const first = (details[0] as { message?: unknown }).message;
    const more = details.length > 1 ? ` (and ${details.length - 1} more)` : '';
    return `${details.length} problem${details.length === 1 ? '' : 's'} (see Problems): ${typeof first === 'string' ? first : error.code}${more}`;
  }
  return error.message.split('\n')[0] || error.code;
}

/** The problems of `r` when the host refused a definition, else none. */
function refusedProblems(error: ApiError): Problem[] {
  return error.code === 'INVALID_WORKFLOW' && Array.isArray(error.details) ? (error.details as Problem[]) : [];
}

/**
 * `host` without what `local` already says: same code and path, or same code and message (the
 * host and this page run one validator, so most of its problems are already listed).
 */
function newFromHost(host: readonly Problem[], local: readonly Problem[]): Problem[] {
  const seen = new Set(local.flatMap((p) => [`${p.code}\u0000${p.message}`, `${p.code}\u0000${JSON.stringify(p.path ?? null)}`]));
  return host.filter((p) => !seen.has(`${p.code}\u0000${p.message}`) && !(p.path !== undefined && seen.has(`${p.code}\u0000${JSON.stringify(p.path)}`)));
}

function isErrorHandle(handle: string | null | undefined): boolean {
  return handle === 'error';
}

/** A free `untitled` name among `taken`. */
function untitled(taken: ReadonlySet<string>): string {
  return freshId('untitled', taken);
}

/** Builds a designer store over `deps.api`. */
export function createDesignerStore(deps: DesignerDeps): DesignerStore {
  const { api } = deps;
  const analyzeDelay = deps.analyzeDelayMs ?? 120;
  const hostCheckDelay = deps.hostCheckDelayMs ?? 400;
  let hostTimer: ReturnType<typeof setTimeout> | undefined;
  /** Counts document changes: a host answer about an older drawing is dropped. */
  let docSeq = 0;
  /** A call whose failure the designer shows itself (no toast as well). */
  const inline: ApiClient['invoke'] = (async (channel: string, input?: unknown) => {
    const r = await (api.invoke as (c: string, i?: unknown) => Promise<{ ok: boolean }>)(channel, input);
    if (!r.ok) deps.claimError?.(channel);
    return r;
  }) as ApiClient['invoke'];
  let baseline: DesignerDoc = { meta: { name: '' }, nodes: [], edges: [] };
  let clipboard: Clipboard | undefined;
  let batchDepth = 0;
  let batchStart: DesignerDoc | undefined;
  let editing = false;
  let seq = 0;
  let analyzeTimer: ReturnType<typeof setTimeout> | undefined;
  let openSeq = 0;
  /** Validates after `analyzeDelay` ms (at once when 0), once for a burst of changes. */
  const scheduleAnalyze = (): void => {
    if (analyzeDelay <= 0) {
      store.getState().analyzeNow();
      return;
    }
    if (analyzeTimer !== undefined) clearTimeout(analyzeTimer);
    analyzeTimer = setTimeout(() => {
      analyzeTimer = undefined;
      store.getState().analyzeNow();
    }, analyzeDelay);
  };
  let history: () => StoreApi<TemporalState<DesignerDoc>> = () => {
    throw new Error('designer store: history used before creation');
  };

  const workflowNames = (): Set<string> => new Set(deps.workflows?.getState().items.map((w) => w.name) ?? []);
  const nodeIds = (nodes: readonly AppNode[]): Set<string> => new Set(nodes.map((n) => n.id));
  const edgeKeys = (edges: readonly FlowEdge[]): Set<string> => new Set(edges.map((e) => e.id));

  const store = createStore<DesignerState>()(
    temporal(
      (set, get, storeApi) => {
        history = () => (storeApi as unknown as DesignerStore).temporal;

        /** Replaces the document without an undo step, clearing history (open, new, import). */
        const load = (doc: DesignerDoc, extra: Partial<DesignerState>, saved: boolean): void => {
          const h = history().getState();
          h.pause();
          batchDepth = 0;
          batchStart = undefined;
          editing = false;
          set({ ...doc, autoName: undefined, ...extra, serverProblems: [], problems: [], problemsByNode: EMPTY_MAP, problemsByEdge: EMPTY_MAP, fitSeq: get().fitSeq + 1 });
          baseline = saved ? docOf(doc) : { meta: { name: '' }, nodes: [], edges: [] };
          set({ dirty: !docEqual(docOf(get()), baseline) });
          h.resume();
          h.clear();
          // Validation waits for the drawing to show (a 500-node workflow takes ~50 ms to check).
          scheduleAnalyze();
        };

        const editable = (): boolean => !get().readOnly;

        /** Problems by node id and by canvas edge id (badges on the canvas). */
        const indexProblems = (all: readonly DesignerProblem[]): Pick<DesignerState, 'problemsByNode' | 'problemsByEdge'> => {
          const byNode = new Map<string, DesignerProblem[]>();
          const byEdge = new Map<string, DesignerProblem[]>();
          const canvasEdge = new Map<string, string>();
          for (const e of get().edges) {
            const key = dslEdgeId(e);
            if (!canvasEdge.has(key)) canvasEdge.set(key, e.id);
          }
          for (const p of all) {
            if (p.nodeId !== undefined) byNode.set(p.nodeId, [...(byNode.get(p.nodeId) ?? []), p]);
            const e = p.edgeId === undefined ? undefined : canvasEdge.get(p.edgeId);
            if (e !== undefined) byEdge.set(e, [...(byEdge.get(e) ?? []), p]);
          }
          return { problemsByNode: byNode.size === 0 ? EMPTY_MAP : byNode, problemsByEdge: byEdge.size === 0 ? EMPTY_MAP : byEdge };
        };

        /** Shows the host's problems beside the live ones (what the live check already lists is left out). */
        const setServerProblems = (host: readonly Problem[]): void => {
          const serverProblems = newFromHost(host, get().problems);
          if (serverProblems.length === 0 && get().serverProblems.length === 0) return;
          set({ serverProblems, ...indexProblems([...get().problems, ...serverProblems]) });
        };

        /**
         * Asks the host to validate `definition` a little later (once for a burst of changes):
         * its save runs checks this page cannot (a custom type's refinements and `validateConfig`,
         * Ajv's compile of the input schema), and what it finds is listed before Save is pressed.
         */
        const scheduleHostCheck = (definition: WorkflowInput): void => {
          if (hostTimer !== undefined) clearTimeout(hostTimer);
          const mine = docSeq;
          hostTimer = setTimeout(() => {
            hostTimer = undefined;
            void inline('workflow:validate', { definition: definition as Record<string, unknown> }).then((r) => {
              if (mine !== docSeq || !r.ok) return;
              setServerProblems(r.value.problems);
            });
          }, hostCheckDelay);
        };

        const refreshVersions = async (name: string): Promise<void> => {
          const r = await api.invoke('workflow:versions', { name });
          if (r.ok && get().source?.name === name) {
            const latest = r.value[0]?.version ?? 0;
            set((s) => ({ versions: r.value.map((v) => ({ version: v.version, createdAt: v.createdAt })), source: s.source ? { ...s.source, latest } : s.source }));
          }
        };

        const afterListChange = async (select: string | undefined): Promise<void> => {
          const wf = deps.workflows?.getState();
          if (!wf) return;
          await wf.load();
          deps.workflows?.getState().select(select);
        };

        const pasteNodes = (clip: Omit<Clipboard, 'pastes'>, offset: number): string[] => {
          const s = get();
          const taken = nodeIds(s.nodes);
          const rename = new Map<string, string>();
          const fresh: AppNode[] = [];
          for (const n of clip.nodes) {
            const id = freshId(n.id, taken);
            taken.add(id);
            rename.set(n.id, id);
            fresh.push({ ...makeNode(id, structuredClone(n.def), { x: n.position.x + offset, y: n.position.y + offset }), selected: true });
          }
          const keys = edgeKeys(s.edges);
          const freshEdges: FlowEdge[] = [];
          for (const e of clip.edges) {
            const source = rename.get(e.source);
            const target = rename.get(e.target);
            if (source === undefined || target === undefined) continue;
            const { id: _explicit, ...data } = structuredClone(e.data);
            freshEdges.push(makeEdge(source, target, data, keys));
          }
          set({
            nodes: [...s.nodes.map((n) => (n.selected ? { ...n, selected: false } : n)), ...fresh],
            edges: [...s.edges.map((e) => (e.selected ? { ...e, selected: false } : e)), ...freshEdges],
          });
          return fresh.map((n) => n.id);
        };

        const clipOfSelection = (): Omit<Clipboard, 'pastes'> | undefined => {
          const s = get();
          const chosen = s.nodes.filter((n) => n.selected);
          if (chosen.length === 0) return undefined;
          const ids = new Set(chosen.map((n) => n.id));
          return {
            nodes: chosen.map((n) => ({ id: n.id, def: structuredClone(n.data.def), position: { ...n.position } })),
            edges: s.edges.filter((e) => ids.has(e.source) && ids.has(e.target)).map((e) => ({ source: e.source, target: e.target, data: structuredClone(e.data ?? {}) })),
          };
        };

        return {
          meta: { format: 1, name: 'untitled' },
          nodes: [],
          edges: [],
          types: [],
          typeInfo: new Map(),
          typesStatus: 'idle',
          catalog: undefined,
          source: undefined,
          readOnly: false,
          versions: [],
          loading: false,
          dirty: false,
          problems: [],
          serverProblems: [],
          problemsByNode: EMPTY_MAP,
          problemsByEdge: EMPTY_MAP,
          busy: false,
          message: undefined,
          refusal: undefined,
          focus: undefined,
          fitSeq: 0,
          request: undefined,
          autoName: 'untitled',

          async loadTypes() {
            if (get().typesStatus === 'loading' || get().typesStatus === 'ready') return;
            set({ typesStatus: 'loading' });
            const r = await api.invoke('node:types');
            if (!r.ok) {
              set({ typesStatus: 'error' });
              return;
            }
            set({ types: r.value, typeInfo: new Map(r.value.map((t) => [t.type, t])), typesStatus: 'ready', catalog: catalogFrom(r.value) });
            get().analyzeNow();
          },

          newWorkflow(name) {
            openSeq++;
            const given = name ?? untitled(workflowNames());
            load({ meta: { format: 1, name: given }, nodes: [], edges: [] }, { source: undefined, readOnly: false, versions: [], loading: false, autoName: name === undefined ? given : undefined }, false);
            // A new draft is a change from nothing only once something is drawn; what the message
            // line said was about the drawing before (a refused save would stay over the new one).
            baseline = docOf(get());
            set({ dirty: false, message: undefined });
          },

          async open(name, version) {
            const mine = ++openSeq;
            set({ loading: true });
            const [got, versions] = await Promise.all([
              api.invoke('workflow:get', version === undefined ? { name } : { name, version }),
              api.invoke('workflow:versions', { name }),
            ]);
            if (mine !== openSeq) return false;
            if (!got.ok) {
              set({ loading: false });
              return false;
            }
            const drawn = fromDefinition(got.value.definition);
            if (!drawn.ok) {
              set({ loading: false, message: { kind: 'error', text: `Cannot draw ${name}: ${drawn.message}`, seq: ++seq } });
              return false;
            }
            const list = versions.ok ? versions.value.map((v) => ({ version: v.version, createdAt: v.createdAt })) : [];
            const latest = list[0]?.version ?? got.value.version;
            load(
              drawn.doc,
              { source: { name: got.value.name, version: got.value.version, latest }, readOnly: got.value.version !== latest, versions: list, loading: false, message: undefined },
              true,
            );
            return true;
          },

          importText(text, fileName) {
            const drawn = readWorkflowFile(text, fileName);
            if (!drawn.ok) return { ok: false, message: drawn.message };
            openSeq++;
            const name = drawn.doc.meta.name;
            const existing = typeof name === 'string' ? deps.workflows?.getState().items.find((w) => w.name === name) : undefined;
            load(
              drawn.doc,
              {
                source: existing ? { name: existing.name, version: existing.latestVersion, latest: existing.latestVersion } : undefined,
                readOnly: false,
                versions: [],
                loading: false,
                message: { kind: 'info', text: `Imported ${fileName ?? 'the workflow'}: not saved yet`, seq: ++seq },
              },
              false,
            );
            if (existing) void refreshVersions(existing.name);
            return { ok: true };
          },

          exportDefinition: () => toDefinition(docOf(get())),

          exportFile() {
            const definition = get().exportDefinition();
            return { fileName: exportFileName(String(definition.name ?? 'workflow')), text: `${JSON.stringify(definition, null, 2)}\n` };
          },

          async save() {
            get().editEnd();
            const s = get();
            if (s.readOnly || s.busy) return false;
            get().analyzeNow();
            const count = get().problems.length + get().serverProblems.length;
            if (count > 0) {
              set({ message: { kind: 'error', text: `Cannot save: ${count} problem${count === 1 ? '' : 's'} to fix first (see Problems)`, seq: ++seq } });
              return false;
            }
            const name = s.meta.name;
            if (s.source?.name !== name && workflowNames().has(name)) {
              set({ message: { kind: 'error', text: `Cannot save: a workflow named "${name}" already exists. Choose another name in the workflow properties.`, seq: ++seq } });
              return false;
            }
            const doc = docOf(s);
            set({ busy: true });
            const r = await inline('workflow:save', { definition: toDefinition(doc) as Record<string, unknown> });
            set({ busy: false });
            if (!r.ok) {
              set({ message: { kind: 'error', text: `Not saved: ${refusalText(r.error)}`, seq: ++seq } });
              setServerProblems(refusedProblems(r.error));
              return false;
            }
            baseline = doc;
            const v = r.value;
            set((cur) => ({
              source: { name: v.name, version: v.version, latest: Math.max(v.version, cur.source?.name === v.name ? cur.source.latest : 0) },
              dirty: !docEqual(docOf(cur), baseline),
              serverProblems: [],
              message: {
                kind: 'info',
                text: v.created ? `Saved ${v.name} as version ${v.version}` : `No change to the definition: still version ${v.version} (layout saved)`,
                seq: ++seq,
              },
            }));
            await refreshVersions(v.name);
            await afterListChange(v.name);
            return true;
          },

          needsName() {
            const s = get();
            return !s.source && !s.readOnly && s.autoName !== undefined && s.meta.name === s.autoName;
          },

          async nameAndSave(newName) {
            const name = newName.trim();
            // The DSL's own rule for names (nameText): no control characters.
            // eslint-disable-next-line no-control-regex
            if (/[\u0000-\u001f\u007f-\u009f]/u.test(name)) return 'A workflow name cannot hold control characters (tabs, newlines, …)';
            const why = await get().rename(name);
            if (why !== undefined) return why;
            set({ autoName: undefined });
            await get().save();
            return undefined;
          },

          async restoreVersion() {
            const s = get();
            if (!s.readOnly || !s.source || s.busy) return false;
            set({ busy: true });
            const r = await inline('workflow:save', { definition: toDefinition(docOf(s)) as Record<string, unknown> });
            set({ busy: false });
            if (!r.ok) {
              set({ message: { kind: 'error', text: `Not restored: ${refusalText(r.error)}`, seq: ++seq } });
              return false;
            }
            const from = s.source.version;
            await get().open(r.value.name);
            set({ message: { kind: 'info', text: r.value.created ? `Restored version ${from} as version ${r.value.version}` : `Version ${from} is the same as the latest (${r.value.version})`, seq: ++seq } });
            await afterListChange(r.value.name);
            return true;
          },

          async rename(newName) {
            const s = get();
            const name = newName.trim();
            if (name === '') return 'A workflow needs a name';
            if (name.length > 200) return 'A workflow name is at most 200 characters';
            if (name === s.meta.name) return undefined;
            if (workflowNames().has(name)) return `A workflow named "${name}" already exists`;
            if (!s.source) {
              get().updateMeta((m) => ({ ...m, name }));
              return undefined;
            }
            set({ busy: true });
            const r = await inline('workflow:rename', { name: s.source.name, newName: name });
            set({ busy: false });
            if (!r.ok) return r.error.message;
            // The host renamed every version: the canvas and what counts as saved follow, and
            // history is cleared so undo cannot bring the old name back.
            const h = history().getState();
            h.pause();
            const renamedBaseline = baseline.meta === get().meta;
            const meta = { ...get().meta, name };
            set((cur) => ({ meta, source: cur.source ? { ...cur.source, name } : cur.source, message: { kind: 'info', text: `Renamed to ${name}`, seq: ++seq } }));
            baseline = { ...baseline, meta: renamedBaseline ? meta : { ...baseline.meta, name } };
            set({ dirty: !docEqual(docOf(get()), baseline) });
            h.resume();
            h.clear();
            await afterListChange(name);
            return undefined;
          },

          async duplicate(newName) {
            const name = newName.trim();
            if (name === '') return 'A workflow needs a name';
            if (workflowNames().has(name)) return `A workflow named "${name}" already exists`;
            get().analyzeNow();
            if (get().problems.length + get().serverProblems.length > 0) return 'Fix the problems first: a copy is saved at once';
            const doc = docOf(get());
            set({ busy: true });
            const r = await inline('workflow:save', { definition: toDefinition({ ...doc, meta: { ...doc.meta, name } }) as Record<string, unknown> });
            set({ busy: false });
            if (!r.ok) return refusalText(r.error);
            await get().open(name);
            set({ message: { kind: 'info', text: `Saved a copy as ${name}`, seq: ++seq } });
            await afterListChange(name);
            return undefined;
          },

          async deleteWorkflow() {
            const s = get();
            if (!s.source) {
              get().newWorkflow();
              return true;
            }
            set({ busy: true });
            const r = await inline('workflow:delete', { name: s.source.name });
            set({ busy: false });
            if (!r.ok) {
              set({ message: { kind: 'error', text: `Not deleted: ${r.error.message}`, seq: ++seq } });
              return false;
            }
            const wf = deps.workflows;
            if (wf) await wf.getState().load();
            const next = wf?.getState().items.find((w) => w.name !== s.source?.name)?.name;
            if (next !== undefined) {
              wf?.getState().select(next);
              await get().open(next);
            } else {
              wf?.getState().select(undefined);
              get().newWorkflow();
            }
            set({ message: { kind: 'info', text: `Deleted ${s.source.name}`, seq: ++seq } });
            return true;
          },

          async run(variables, test) {
            const s = get();
            if (!s.source) return { ok: false, error: { code: 'INVALID_STATE', message: 'Save the workflow before running it' } };
            if (s.busy) return { ok: false, error: { code: 'INVALID_STATE', message: 'The designer is busy (saving or loading): try again' } };
            set({ busy: true });
            const r = await inline('instance:start', {
              workflow: s.source.name,
              version: s.source.version,
              ...(variables === undefined ? {} : { variables }),
              ...(test === undefined ? {} : { test: true, ...(Object.keys(test.pins).length > 0 ? { pins: test.pins } : {}) }),
            });
            set({ busy: false });
            return r;
          },

          onNodesChange(changes) {
            const allowed = editable() ? changes.filter((c) => c.type !== 'remove' && c.type !== 'add' && c.type !== 'replace') : changes.filter((c) => c.type === 'select' || c.type === 'dimensions');
            if (allowed.length === 0) return;
            set({ nodes: applyNodeChanges(allowed, get().nodes) });
          },

          onEdgesChange(changes) {
            const allowed = changes.filter((c) => c.type === 'select');
            if (allowed.length === 0) return;
            set({ edges: applyEdgeChanges(allowed, get().edges) });
          },

          refusalFor(c) {
            if (!c.source || !c.target) return 'Refused: connect an output to an input';
            return connectionRefusal(get().edges, c.source, c.target, isErrorHandle(c.sourceHandle) ? 'error' : 'success');
          },

          refuse(text) {
            set({ refusal: { text, seq: ++seq } });
          },

          onConnect(c) {
            get().editEnd();
            if (!editable()) return;
            const reason = get().refusalFor(c);
            if (reason !== undefined) {
              get().refuse(reason);
              return;
            }
            const data: FlowEdgeData = isErrorHandle(c.sourceHandle) ? { on: 'error' } : {};
            const edges = get().edges;
            set({ edges: [...edges, makeEdge(c.source, c.target, data, edgeKeys(edges))], refusal: undefined });
          },

          addNode(type, position) {
            get().editEnd();
            if (!editable()) return undefined;
            const s = get();
            const id = freshId(type, nodeIds(s.nodes));
            let x = Math.round(position.x / GRID) * GRID;
            let y = Math.round(position.y / GRID) * GRID;
            const occupied = new Set(s.nodes.map((n) => `${n.position.x},${n.position.y}`));
            while (occupied.has(`${x},${y}`)) {
              x += PASTE_OFFSET;
              y += PASTE_OFFSET;
            }
            const node = { ...makeNode(id, { type }, { x, y }), selected: true };
            set({ nodes: [...s.nodes.map((n) => (n.selected ? { ...n, selected: false } : n)), node], edges: s.edges.map((e) => (e.selected ? { ...e, selected: false } : e)) });
            return id;
          },

          deleteSelection() {
            get().editEnd();
            if (!editable()) return;
            const s = get();
            const gone = new Set(s.nodes.filter((n) => n.selected).map((n) => n.id));
            const edges = s.edges.filter((e) => !e.selected && !gone.has(e.source) && !gone.has(e.target));
            if (gone.size === 0 && edges.length === s.edges.length) return;
            set({ nodes: gone.size === 0 ? s.nodes : s.nodes.filter((n) => !gone.has(n.id)), edges });
          },

          copySelection() {
            const clip = clipOfSelection();
            if (!clip) return 0;
            clipboard = { ...clip, pastes: 0 };
            return clip.nodes.length;
          },

          paste() {
            get().editEnd();
            if (!editable() || !clipboard) return [];
            clipboard.pastes++;
            const ids = pasteNodes(clipboard, PASTE_OFFSET * clipboard.pastes);
            const first = ids[0];
            if (first !== undefined) set({ focus: { kind: 'node', id: first, seq: ++seq } });
            return ids;
          },

          duplicateSelection() {
            get().editEnd();
            if (!editable()) return [];
            const clip = clipOfSelection();
            return clip ? pasteNodes(clip, PASTE_OFFSET) : [];
          },

          selectAll() {
            const s = get();
            set({ nodes: s.nodes.map((n) => (n.selected ? n : { ...n, selected: true })), edges: s.edges.map((e) => (e.selected ? e : { ...e, selected: true })) });
          },

          selectOnly(kind, id) {
            const s = get();
            set({
              nodes: s.nodes.map((n) => {
                const want = kind === 'node' && n.id === id;
                return Boolean(n.selected) === want ? n : { ...n, selected: want };
              }),
              edges: s.edges.map((e) => {
                const want = kind === 'edge' && e.id === id;
                return Boolean(e.selected) === want ? e : { ...e, selected: want };
              }),
            });
          },

          updateNode(id, update) {
            if (!editable()) return;
            const s = get();
            const i = s.nodes.findIndex((n) => n.id === id);
            const node = s.nodes[i];
            if (!node) return;
            const def = update(node.data.def);
            if (def === node.data.def) return;
            const nodes = s.nodes.slice();
            nodes[i] = { ...node, type: kindOf(def.type), data: { def } } as AppNode;
            set({ nodes });
          },

          renameNode(id, newId) {
            if (!editable()) return 'This version is read-only';
            if (id === newId) return undefined;
            const s = get();
            const others = nodeIds(s.nodes);
            others.delete(id);
            const why = idProblem(newId, others);
            if (why !== undefined) return why;
            const nodes = s.nodes.map((n) => (n.id === id ? ({ ...n, id: newId } as AppNode) : n));
            const keys = new Set<string>();
            const touched = new Set<number>();
            s.edges.forEach((e, i) => {
              if (e.source === id || e.target === id) touched.add(i);
              else keys.add(e.id);
            });
            const edges = s.edges.map((e, i) => {
              if (!touched.has(i)) return e;
              const source = e.source === id ? newId : e.source;
              const target = e.target === id ? newId : e.target;
              return { ...e, id: makeEdge(source, target, e.data ?? {}, keys).id, source, target };
            });
            set({ nodes, edges });
            return undefined;
          },

          updateEdge(canvasId, update) {
            if (!editable()) return;
            const s = get();
            const i = s.edges.findIndex((e) => e.id === canvasId);
            const edge = s.edges[i];
            if (!edge) return;
            const data = update(edge.data ?? {});
            if (data === edge.data) return;
            const keys = edgeKeys(s.edges);
            keys.delete(canvasId);
            const remade = makeEdge(edge.source, edge.target, data, keys);
            const edges = s.edges.slice();
            edges[i] = { ...edge, id: remade.id, sourceHandle: sourceHandleOf(data), data };
            set({ edges });
          },

          updateMeta(update) {
            if (!editable()) return;
            const meta = update(get().meta);
            if (meta !== get().meta) set({ meta });
          },

          layout() {
            get().editEnd();
            if (!editable()) return;
            const s = get();
            const laid = autoLayout(s.nodes, s.edges);
            const nodes = s.nodes.map((n) => {
              const p = laid.get(n.id);
              return p && (p.x !== n.position.x || p.y !== n.position.y) ? { ...n, position: p } : n;
            });
            set({ nodes, fitSeq: s.fitSeq + 1 });
          },

          undo() {
            if (!editable()) return;
            get().editEnd();
            get().endBatch();
            history().getState().undo();
          },

          redo() {
            if (!editable()) return;
            get().editEnd();
            get().endBatch();
            history().getState().redo();
          },

          beginBatch() {
            if (batchDepth++ === 0) {
              batchStart = docOf(get());
              history().getState().pause();
            }
          },

          endBatch() {
            if (batchDepth === 0) return;
            if (--batchDepth > 0) return;
            const h = history();
            h.getState().resume();
            const start = batchStart;
            batchStart = undefined;
            if (start && !docEqual(start, docOf(get()))) {
              h.setState((t) => ({ pastStates: [...t.pastStates, start].slice(-UNDO_LIMIT), futureStates: [] }));
            }
          },

          editStart() {
            get().editEnd();
            editing = true;
            get().beginBatch();
          },

          editEnd() {
            if (!editing) return;
            editing = false;
            get().endBatch();
          },

          analyzeNow() {
            if (analyzeTimer !== undefined) {
              clearTimeout(analyzeTimer);
              analyzeTimer = undefined;
            }
            const s = get();
            if (!s.catalog) return;
            const definition = toDefinition(docOf(s));
            const problems = designerProblems(definition, s.catalog);
            set({ problems, ...indexProblems([...problems, ...s.serverProblems]) });
            scheduleHostCheck(definition);
          },

          focusProblem(p) {
            get().editEnd();
            const s = get();
            if (p.edgeId !== undefined) {
              const edge = s.edges.find((e) => dslEdgeId(e) === p.edgeId);
              if (edge) {
                get().selectOnly('edge', edge.id);
                set({ focus: { kind: 'edge', id: edge.id, seq: ++seq } });
                return;
              }
            }
            if (p.nodeId !== undefined && s.nodes.some((n) => n.id === p.nodeId)) {
              get().selectOnly('node', p.nodeId);
              set({ focus: { kind: 'node', id: p.nodeId, seq: ++seq } });
              return;
            }
            get().selectOnly('none');
            set({ focus: { kind: 'workflow', seq: ++seq } });
          },

          setMessage(kind, text) {
            set({ message: { kind, text, seq: ++seq } });
          },

          clearMessage() {
            set({ message: undefined });
          },

          ask(kind) {
            set({ request: { kind, seq: ++seq } });
          },
        };
      },
      {
        partialize: (s): DesignerDoc => docOf(s),
        equality: docEqual,
        limit: UNDO_LIMIT,
      },
    ),
  ) as DesignerStore;

  // After every change of the drawing: mark it unsaved at once, and validate again (debounced)
  // unless only positions moved. The host's problems of a refused save go stale with any change.
  store.subscribe((s, prev) => {
    if (s.nodes === prev.nodes && s.edges === prev.edges && s.meta === prev.meta) return;
    const doc = docOf(s);
    if (docEqual(doc, docOf(prev))) return;
    const dirty = !docEqual(doc, baseline);
    if (dirty !== s.dirty) store.setState({ dirty });
    if (semanticEqual(doc, docOf(prev))) return;
    docSeq++;
    if (s.serverProblems.length > 0) store.setState({ serverProblems: [] });
    scheduleAnalyze();
  });

  return store;
}
