/** The current time, re-read every `everyMs` (durations of live things keep moving). */
import { useEffect, useState } from 'react';

/** See the module comment. */
export function useNow(everyMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(t);
  }, [everyMs]);
  return now;
}
