// The preload's `window.runnel`, driven through a fake ipcRenderer (never importing `electron`).
import { describe, expect, it } from 'vitest';
import { channels, type EventBatch } from '../../../engine/api/contract';
import { COMMAND_CHANNEL, createBridge, EVENTS_CHANNEL, isAllowedChannel, type IpcRendererLike } from '../../../electron/preload/bridge';
import { desktopChannels } from '../../../electron/shared/desktop-contract';

type Listener = (event: unknown, ...args: unknown[]) => void;

function fakeIpc(answer: (channel: string, payload: unknown) => Promise<unknown> = () => Promise.resolve({ ok: true, value: 'v' })) {
  const invoked: Array<[string, unknown]> = [];
  const listeners = new Map<string, Set<Listener>>();
  const ipc: IpcRendererLike = {
    invoke: (channel, payload) => {
      invoked.push([channel, payload]);
      return answer(channel, payload);
    },
    on: (channel, l) => {
      if (!listeners.has(channel)) listeners.set(channel, new Set());
      listeners.get(channel)?.add(l);
    },
    removeListener: (channel, l) => listeners.get(channel)?.delete(l),
  };
  const emit = (channel: string, value: unknown) => {
    for (const l of listeners.get(channel) ?? []) l({ sender: 'secret' }, value);
  };
  return { ipc, invoked, emit, listeners };
}

describe('createBridge', () => {
  it('given a contract channel, passes the payload through and returns the result as it came', async () => {
    const { ipc, invoked } = fakeIpc();
    const bridge = createBridge(ipc);
    await expect(bridge.invoke('instance:get', { id: 1 })).resolves.toEqual({ ok: true, value: 'v' });
    expect(invoked).toEqual([['instance:get', { id: 1 }]]);
  });

  it('allows exactly the contract channels plus the desktop-only ones', () => {
    for (const c of [...channels, ...desktopChannels]) expect(isAllowedChannel(c), c).toBe(true);
    for (const c of ['runnel:events', 'ELECTRON_BROWSER_REQUIRE', 'toString', '__proto__', '', 42, undefined]) expect(isAllowedChannel(c), String(c)).toBe(false);
  });

  it('given any other channel, answers UNKNOWN_CHANNEL without touching IPC', async () => {
    const { ipc, invoked } = fakeIpc();
    const bridge = createBridge(ipc);
    const invoke = bridge.invoke as unknown as (c: string, p?: unknown) => Promise<unknown>;
    for (const c of ['ELECTRON_BROWSER_REQUIRE', 'runnel:events', 'constructor']) {
      await expect(invoke(c, {})).resolves.toMatchObject({ ok: false, error: { code: 'UNKNOWN_CHANNEL' } });
    }
    expect(invoked).toEqual([]);
  });

  it('given a rejected invoke (Electron keeps only the message), answers INTERNAL with that message', async () => {
    const { ipc } = fakeIpc(() => Promise.reject(new Error("Error invoking remote method 'metrics:get': boom")));
    await expect(createBridge(ipc).invoke('metrics:get')).resolves.toEqual({ ok: false, error: { code: 'INTERNAL', message: "Error invoking remote method 'metrics:get': boom" } });
  });

  it('given a malformed answer, answers INTERNAL instead of passing it on', async () => {
    for (const bad of [undefined, null, 'x', { ok: true }, { ok: false }, { ok: false, error: { code: 1, message: 'm' } }]) {
      const { ipc } = fakeIpc(() => Promise.resolve(bad));
      await expect(createBridge(ipc).invoke('workflow:list'), JSON.stringify(bad)).resolves.toMatchObject({ ok: false, error: { code: 'INTERNAL' } });
    }
  });

  it('hands event batches to listeners without Electron\'s event object, and unsubscribes', () => {
    const { ipc, emit, listeners } = fakeIpc();
    const bridge = createBridge(ipc);
    const got: unknown[][] = [];
    const off = bridge.onEvent((...args) => got.push(args));
    const batch: EventBatch = { seq: 1, events: [{ type: 'instance.changed', instanceId: 1, status: 'RUNNING' }], coalesced: 0 };
    emit(EVENTS_CHANNEL, batch);
    emit(EVENTS_CHANNEL, 'not a batch');
    expect(got).toEqual([[batch]]);
    off();
    expect(listeners.get(EVENTS_CHANNEL)?.size).toBe(0);
  });

  it('passes only known menu commands', () => {
    const { ipc, emit } = fakeIpc();
    const got: string[] = [];
    createBridge(ipc).onCommand((c) => got.push(c));
    emit(COMMAND_CHANNEL, 'workflow.import');
    emit(COMMAND_CHANNEL, 'rm -rf');
    emit(COMMAND_CHANNEL, { command: 'workflow.new' });
    expect(got).toEqual(['workflow.import']);
  });
});
