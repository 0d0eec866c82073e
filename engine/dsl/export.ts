/**
 * Export, canonical form and definition hashing (DESIGN.md section 3, "Export is lossless").
 *
 * Shared with the renderer: imports nothing from Node, so the hash is a small pure-JS SHA-256.
 */
import { WorkflowSchema, edgeId, type Workflow, type WorkflowInput } from './schema';

type Json = Record<string, unknown>;

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A deep copy of JSON data; `undefined` members are dropped, as JSON would. */
function cloneJson<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v: unknown) => cloneJson(v)) as T;
  if (isRecord(value)) {
    const out: Json = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = cloneJson(v);
    return out as T;
  }
  return value;
}

/** Copies `source` with `order` keys first (those present), then any others in their order. */
function ordered(source: Json, order: readonly string[]): Json {
  const out: Json = {};
  for (const key of order) if (source[key] !== undefined) out[key] = cloneJson(source[key]);
  for (const [key, v] of Object.entries(source))
    if (!Object.hasOwn(out, key) && v !== undefined) out[key] = cloneJson(v);
  return out;
}

const WORKFLOW_KEYS = [
  'format',
  'name',
  'description',
  'deadlineMs',
  'inputSchema',
  'onFailure',
  'retry',
  'nodes',
  'edges',
  'ui',
];
const NODE_KEYS = [
  'id',
  'type',
  'name',
  'description',
  'config',
  'input',
  'output',
  'retry',
  'timeoutMs',
  'join',
  'onFailure',
  'compensate',
];
const COMPENSATION_KEYS = ['type', 'name', 'config', 'input', 'retry', 'timeoutMs'];
const EDGE_KEYS = ['id', 'from', 'to', 'on', 'when', 'label'];
const RETRY_KEYS = ['maxAttempts', 'initialIntervalMs', 'backoffCoefficient', 'maxIntervalMs', 'jitter'];

/**
 * A workflow as a file would hold it: every field kept (`ui` positions included), nothing added.
 *
 * Lossless: `validateWorkflow(exportWorkflow(wf))` gives `wf` back. Keys come in a reading order
 * (name, nodes, edges, ui; a node's id and type first) so exported files diff well; config
 * contents keep their own order. Returns a new structure.
 */
export function exportWorkflow(wf: Workflow): WorkflowInput {
  const out = ordered(wf as Json, WORKFLOW_KEYS);
  if (isRecord(out['retry'])) out['retry'] = ordered(out['retry'], RETRY_KEYS);
  out['nodes'] = wf.nodes.map((node) => {
    const n = ordered(node as Json, NODE_KEYS);
    if (isRecord(n['retry'])) n['retry'] = ordered(n['retry'], RETRY_KEYS);
    if (isRecord(n['compensate'])) {
      const c = ordered(n['compensate'], COMPENSATION_KEYS);
      if (isRecord(c['retry'])) c['retry'] = ordered(c['retry'], RETRY_KEYS);
      n['compensate'] = c;
    }
    return n;
  });
  out['edges'] = wf.edges.map((edge) => ordered(edge as Json, EDGE_KEYS));
  return out as WorkflowInput;
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v: unknown) => (v === undefined ? null : canonical(v)));
  if (isRecord(value)) {
    const out: Json = {};
    for (const key of Object.keys(value).sort()) {
      const v = value[key];
      if (v !== undefined) out[key] = canonical(v);
    }
    return out;
  }
  return value;
}

/**
 * JSON with object keys sorted (by UTF-16 code units, recursively), 2-space indent and a trailing
 * newline.
 *
 * Two values equal as JSON give the same text, whatever their key order. `undefined` members are
 * dropped and non-finite numbers become `null`, as in JSON.stringify.
 */
export function canonicalJson(value: unknown): string {
  return `${JSON.stringify(canonical(value), null, 2) ?? 'null'}\n`;
}

/**
 * A workflow in the form comparisons use: import → export → import gives the same value.
 *
 * Applies the schema (defaults such as `edges: []`) when it passes, then drops what only restates
 * a default: `format: 1`, an edge's `on: "success"` and an `id` equal to its default
 * (`from->to`), a node's `join: "any"`, and empty `config` / `retry` objects. `ui` is kept.
 * Input that fails the schema is normalised as far as its shape allows. Returns a new structure
 * with sorted keys.
 */
export function normalizeWorkflow(raw: unknown): unknown {
  const parsed = WorkflowSchema.safeParse(raw);
  const wf = cloneJson(parsed.success ? (parsed.data as unknown) : raw);
  if (!isRecord(wf)) return canonical(wf);
  if (wf['format'] === 1) delete wf['format'];
  dropEmpty(wf, 'retry');
  const nodes = wf['nodes'];
  if (Array.isArray(nodes)) {
    for (const node of nodes) {
      if (!isRecord(node)) continue;
      if (node['join'] === 'any') delete node['join'];
      dropEmpty(node, 'config');
      dropEmpty(node, 'retry');
      const compensate = node['compensate'];
      if (isRecord(compensate)) {
        dropEmpty(compensate, 'config');
        dropEmpty(compensate, 'retry');
      }
    }
  }
  const edges = wf['edges'];
  if (Array.isArray(edges)) {
    for (const edge of edges) {
      if (!isRecord(edge)) continue;
      if (edge['on'] === 'success') delete edge['on'];
      const from = edge['from'];
      const to = edge['to'];
      if (typeof from === 'string' && typeof to === 'string' && typeof edge['id'] === 'string') {
        const on = edge['on'] === 'error' ? 'error' : undefined;
        if (edge['id'] === edgeId(on ? { from, to, on } : { from, to })) delete edge['id'];
      }
    }
  }
  return canonical(wf);
}

function dropEmpty(holder: Json, key: string): void {
  const v = holder[key];
  if (isRecord(v) && Object.keys(v).length === 0) delete holder[key];
}

/**
 * A stable hash of a workflow's meaning, without `ui`: hex SHA-256 of the canonical JSON of
 * {@link normalizeWorkflow}'s result minus `ui`.
 *
 * Moving a node in the designer changes `ui` only, so it does not make a new version; reordering
 * keys or restating defaults does not either. 64 lowercase hex characters.
 */
export function definitionHash(wf: Workflow | WorkflowInput): string {
  const normalized = normalizeWorkflow(wf);
  if (isRecord(normalized)) delete normalized['ui'];
  return sha256Hex(canonicalJson(normalized));
}

/** UTF-8 bytes of a string; lone surrogates become U+FFFD, as TextEncoder does. */
function utf8(s: string): number[] {
  const bytes: number[] = [];
  for (const ch of s) {
    let cp = ch.codePointAt(0) ?? 0xfffd;
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
    if (cp < 0x80) bytes.push(cp);
    else if (cp < 0x800) bytes.push(0xc0 | (cp >> 6), 0x80 | (cp & 63));
    else if (cp < 0x10000) bytes.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
    else bytes.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
  }
  return bytes;
}

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

/**
 * SHA-256 (FIPS 180-4) of a string's UTF-8 bytes, as lowercase hex.
 *
 * Pure JS so the renderer computes the same hash as the engine without node:crypto or the async
 * WebCrypto API. Definitions are kilobytes, so speed does not matter.
 */
export function sha256Hex(text: string): string {
  const bytes = utf8(text);
  const bitLength = bytes.length * 8;
  bytes.push(0x80);
  while (bytes.length % 64 !== 56) bytes.push(0);
  // Length as a 64-bit big-endian integer; the high word via division, as >>> stops at 32 bits.
  const high = Math.floor(bitLength / 0x100000000);
  for (const word of [high, bitLength >>> 0])
    bytes.push((word >>> 24) & 255, (word >>> 16) & 255, (word >>> 8) & 255, word & 255);

  const h = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const w = new Uint32Array(64);
  for (let offset = 0; offset < bytes.length; offset += 64) {
    for (let t = 0; t < 16; t++) {
      const j = offset + t * 4;
      w[t] =
        ((bytes[j] ?? 0) << 24) |
        ((bytes[j + 1] ?? 0) << 16) |
        ((bytes[j + 2] ?? 0) << 8) |
        (bytes[j + 3] ?? 0);
    }
    for (let t = 16; t < 64; t++) {
      const x = w[t - 15] ?? 0;
      const y = w[t - 2] ?? 0;
      const s0 = rotr(x, 7) ^ rotr(x, 18) ^ (x >>> 3);
      const s1 = rotr(y, 17) ^ rotr(y, 19) ^ (y >>> 10);
      w[t] = (w[t - 16] ?? 0) + s0 + (w[t - 7] ?? 0) + s1;
    }
    let a = h[0] ?? 0;
    let b = h[1] ?? 0;
    let c = h[2] ?? 0;
    let d = h[3] ?? 0;
    let e = h[4] ?? 0;
    let f = h[5] ?? 0;
    let g = h[6] ?? 0;
    let hh = h[7] ?? 0;
    for (let t = 0; t < 64; t++) {
      const t1 =
        (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + (K[t] ?? 0) + (w[t] ?? 0)) >>>
        0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) >>> 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) >>> 0;
    }
    const add = [a, b, c, d, e, f, g, hh];
    for (let i = 0; i < 8; i++) h[i] = (h[i] ?? 0) + (add[i] ?? 0);
  }
  return [...h].map((x) => x.toString(16).padStart(8, '0')).join('');
}

function rotr(x: number, n: number): number {
  return ((x >>> n) | (x << (32 - n))) >>> 0;
}
