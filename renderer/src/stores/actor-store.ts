/**
 * Who acts: the name sent as `actor` with every action of the monitor (start, resume, retry,
 * cancel, approve, bulk), so history says who did what. Kept in `localStorage` (key
 * {@link ACTOR_STORAGE_KEY}); "you" until someone types a name.
 *
 * A store creator apart from hooks: tests pass a fake storage.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';

/** Key of the actor's name in `localStorage`. */
export const ACTOR_STORAGE_KEY = 'runnel.actor';

/** The name used until someone types one. */
export const DEFAULT_ACTOR = 'you';

/** State and actions of the actor store. */
export interface ActorState {
  actor: string;
  /** Sets the name (trimmed, at most 200 characters; empty means the default) and keeps it. */
  setActor(name: string): void;
}

/** An actor store over `storage` (default: none, so nothing is kept). */
export function createActorStore(storage?: Pick<Storage, 'getItem' | 'setItem'>): StoreApi<ActorState> {
  let initial = DEFAULT_ACTOR;
  try {
    const kept = storage?.getItem(ACTOR_STORAGE_KEY);
    if (kept) initial = kept;
  } catch {
    // storage may be disabled
  }
  return createStore<ActorState>()((set) => ({
    actor: initial,
    setActor(name) {
      const actor = name.trim().slice(0, 200) || DEFAULT_ACTOR;
      set({ actor });
      try {
        storage?.setItem(ACTOR_STORAGE_KEY, actor);
      } catch {
        // not kept: still used for this session
      }
    },
  }));
}
