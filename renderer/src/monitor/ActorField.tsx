/**
 * "Acting as": the name sent with every action, kept in localStorage (test id `actor-name`).
 */
import { useEffect, useState } from 'react';
import { useActor } from './hooks';

/** See the module comment. */
export function ActorField() {
  const actor = useActor((s) => s.actor);
  const setActor = useActor((s) => s.setActor);
  const [text, setText] = useState(actor);
  useEffect(() => setText(actor), [actor]);
  return (
    <label className="actor-field" title="Recorded in history as who took each action">
      acting as
      <input
        data-testid="actor-name"
        value={text}
        maxLength={200}
        onChange={(e) => setText(e.target.value)}
        onBlur={() => setActor(text)}
        onKeyDown={(e) => e.key === 'Enter' && setActor(text)}
      />
    </label>
  );
}
