/**
 * The script sandbox's WebAssembly modules: one per memory limit per thread, each with a linear
 * memory capped at its base plus that limit (see {@link SandboxHeap}).
 */
import { RELEASE_SYNC, newQuickJSWASMModuleFromVariant, newVariant, type QuickJSWASMModule } from 'quickjs-emscripten';

const MIB = 1024 * 1024;

/** The part of a QuickJS module the script node uses (a `TestQuickJSWASMModule` fits too). */
export type QuickJSModuleLike = Pick<QuickJSWASMModule, 'newRuntime'>;

/** The emscripten heap functions of a module (present on every quickjs-emscripten build). */
export interface EmscriptenHeap {
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  lengthBytesUTF8(text: string): number;
}

/**
 * The linear memory of a pooled module: what makes the memory limit a real bound.
 *
 * QuickJS's own limit counts only ~8 bytes per allocation in this build, so a script could grow the
 * WebAssembly memory to its 2 GiB default maximum (and the host's RSS with it: memory never
 * shrinks). A pooled module instead gets a `WebAssembly.Memory` whose `maximum` is its fixed base
 * plus the memory limit: when it is full, `malloc` returns NULL and QuickJS throws "out of memory".
 * The free part of the base is taken by a ballast allocation that is never touched (so it costs
 * no RSS), which leaves the script about `memoryLimitBytes` of heap, the runtime and its inputs
 * included. A reserve block is freed when the script stops, so its outcome can still be read.
 */
export interface SandboxHeap {
  emscripten: EmscriptenHeap;
  /** Pointer to the reserve block, or 0 while it is released. */
  reserve: number;
  /**
   * Whether the last attempt to grow the memory failed: its maximum was reached, so a `malloc`
   * returned NULL. Reset before each run. It tells a script that ran out of memory even when
   * QuickJS could not allocate its "out of memory" error and threw `null` instead.
   */
  growFailed: boolean;
}

/** A module ready to run scripts: pooled ones carry their capped heap, custom ones do not. */
export interface Sandbox {
  module: QuickJSModuleLike;
  heap?: SandboxHeap;
}

/** `WebAssembly.Memory`, typed here: the engine's `lib` (ES2023, no DOM) has no WebAssembly types. */
const WasmMemory = (
  globalThis as unknown as {
    WebAssembly: {
      Memory: new (descriptor: { initial: number; maximum: number }) => { grow(pages: number): number };
    };
  }
).WebAssembly.Memory;

const WASM_PAGE_BYTES = 64 * 1024;
/**
 * Pages of the module's fixed base: emscripten's static data, its 5 MiB stack and the start of
 * the heap. The wasm file imports its memory with this minimum (16 MiB, quickjs-emscripten 0.32).
 */
const BASE_PAGES = 256;
/** Room the allocator needs beyond the script's own heap (chunk headers, rounding). */
const HEAP_SLACK_BYTES = 256 * 1024;
/** Block freed when the script stopped, so its error or result can still be read. */
const RESERVE_BYTES = 1 * MIB;
/** Modules kept (per thread), one per distinct memory limit, least recently used dropped first. */
const MAX_POOLED_MODULES = 4;

/** A pool slot: the loading module. */
export interface PoolEntry {
  loading: Promise<Sandbox>;
}

/** Pooled modules by memory limit; Map order is least recently used first. */
const pool = new Map<number, PoolEntry>();

/** The pooled module for `memoryLimitBytes`: created on first use; a failed load is retried. */
export function pooledSandbox(memoryLimitBytes: number): PoolEntry {
  const pooled = pool.get(memoryLimitBytes);
  if (pooled !== undefined) {
    pool.delete(memoryLimitBytes);
    pool.set(memoryLimitBytes, pooled);
    return pooled;
  }
  const entry: PoolEntry = { loading: newSandbox(memoryLimitBytes) };
  pool.set(memoryLimitBytes, entry);
  entry.loading.catch(() => dropSandbox(memoryLimitBytes, entry));
  while (pool.size > MAX_POOLED_MODULES) {
    const oldest = pool.keys().next();
    if (oldest.done === true) break;
    pool.delete(oldest.value);
  }
  return entry;
}

/** Forgets a pooled module (if it is still the pooled one); the GC frees its memory. */
export function dropSandbox(memoryLimitBytes: number, entry: PoolEntry): void {
  if (pool.get(memoryLimitBytes) === entry) pool.delete(memoryLimitBytes);
}

/** A fresh module with its capped heap, ballast and reserve. */
async function newSandbox(memoryLimitBytes: number): Promise<Sandbox> {
  const limitPages = Math.ceil((memoryLimitBytes + RESERVE_BYTES + HEAP_SLACK_BYTES) / WASM_PAGE_BYTES);
  const memory = new WasmMemory({ initial: BASE_PAGES, maximum: BASE_PAGES + limitPages });
  const module = await newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory: memory }));
  // The emscripten module is a protected field of QuickJSWASMModule; its heap functions are the
  // only way to size the ballast and to check room before the host copies a string in.
  const emscripten = (module as unknown as { module?: Partial<EmscriptenHeap> }).module;
  if (
    typeof emscripten?._malloc !== 'function' ||
    typeof emscripten._free !== 'function' ||
    typeof emscripten.lengthBytesUTF8 !== 'function'
  ) {
    throw new Error('this quickjs-emscripten build does not expose its heap (malloc/free)');
  }
  const heap: SandboxHeap = { emscripten: emscripten as EmscriptenHeap, reserve: 0, growFailed: false };
  // Emscripten grows the heap by calling `grow` on this object (several sizes in turn, the
  // smallest being the request itself); an own property sees each outcome.
  const grow = memory.grow.bind(memory);
  Object.defineProperty(memory, 'grow', {
    value: (pages: number): number => {
      try {
        const previous = grow(pages);
        heap.growFailed = false;
        return previous;
      } catch (err) {
        heap.growFailed = true;
        throw err;
      }
    },
  });
  // The first allocation lands at the start of the heap: everything from there to the end of the
  // base is free. Take it (minus a page for the allocator) with a ballast that is never freed.
  const start = heap.emscripten._malloc(1);
  heap.emscripten._free(start);
  const ballastBytes = BASE_PAGES * WASM_PAGE_BYTES - start - WASM_PAGE_BYTES;
  if (start !== 0 && ballastBytes > 0) heap.emscripten._malloc(ballastBytes);
  if (!takeReserve(heap)) throw new Error('the script sandbox has no room for its reserve');
  return { module, heap };
}

/** Allocates the reserve block again (after a run released it); false when there is no room. */
export function takeReserve(heap: SandboxHeap): boolean {
  if (heap.reserve === 0) heap.reserve = heap.emscripten._malloc(RESERVE_BYTES);
  return heap.reserve !== 0;
}

/** Releases the reserve block, so the script's outcome can be read after it ran out of memory. */
export function releaseReserve(heap: SandboxHeap | undefined): void {
  if (heap === undefined || heap.reserve === 0) return;
  heap.emscripten._free(heap.reserve);
  heap.reserve = 0;
}

/**
 * Whether `bytes` could be allocated now. The host copies strings into the sandbox with an
 * unchecked `malloc` (a NULL result would be written through), so every copy is checked first.
 */
export function hasRoom(heap: SandboxHeap | undefined, bytes: number): boolean {
  if (heap === undefined) return true;
  const pointer = heap.emscripten._malloc(bytes);
  if (pointer === 0) return false;
  heap.emscripten._free(pointer);
  return true;
}
