// Auto-refresh: every section reads its data again every few seconds, so that a balance moved by
// an API call shows without a reload. Reads pause while the page is hidden.
import { useEffect, useState } from './vendor/hooks.js';
import { getJson } from './api.js';

export const refreshIntervalMs = 2000;
/** Dispatched on window when the operator API answers 401. */
export const sessionEndedEvent = 'coregate:session-ended';

/** { answer, loading } for a GET of the operator API, read again every refreshIntervalMs (null path: nothing). */
export function usePoll(path, intervalMs = refreshIntervalMs) {
  const [answer, setAnswer] = useState(null);
  useEffect(() => {
    setAnswer(null);
    if (path === null) return undefined;
    let stopped = false;
    let timer;
    const read = async () => {
      if (!document.hidden) {
        try {
          const next = await getJson(path);
          // The session ended (expired, or logged out elsewhere): the whole page says so.
          if (next.status === 401) window.dispatchEvent(new CustomEvent(sessionEndedEvent));
          if (!stopped) setAnswer(next);
        } catch (error) {
          if (!stopped) setAnswer({ status: 0, body: { message: `the service did not answer (${error.message})` } });
        }
      }
      if (!stopped) timer = setTimeout(read, intervalMs);
    };
    read();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [path, intervalMs]);
  return answer;
}
