import { useEffect, useRef, useState } from 'react';
import { api, type CallCost, type CallSummary } from '../api';

/** Requests at once: a list of 50 ended calls is read a few at a time, not in one burst. */
const CONCURRENT_READS = 4;
/** A call that ended is priced in the transaction that ends it; a read that still says pending is retried this often... */
const PENDING_RETRY_MS = 3_000;
/** ...this many times at most (then the cell says pending until the page is opened again). */
const MAX_READS_PER_CALL = 4;

/**
 * Each ended call's cost for the calls list: `GET /v1/calls/:id/cost` (the list itself has no
 * cost), read once a call has ended and kept once priced. Live calls have no cost yet.
 */
export function useCallCosts(apiKey: string | undefined, calls: readonly CallSummary[] | undefined): ReadonlyMap<string, CallCost> {
  const [costs, setCosts] = useState<ReadonlyMap<string, CallCost>>(new Map());
  /** Reads made per call, and the calls being read now. */
  const reads = useRef(new Map<string, number>());
  const reading = useRef(new Set<string>());
  /** A call read as pending is not read again before this time (ms since the epoch). */
  const notBefore = useRef(new Map<string, number>());
  /** Bumped when a read finished or a pending call is due to be read again. */
  const [retries, setRetries] = useState(0);
  /** Retries waiting; cancelled when the page goes (not when the list changes, which reruns the effect below). */
  const retryTimers = useRef(new Set<ReturnType<typeof setTimeout>>());
  const mounted = useRef(true);

  useEffect(() => {
    mounted.current = true;
    const timers = retryTimers.current;
    return () => {
      mounted.current = false;
      for (const timer of timers) clearTimeout(timer);
    };
  }, []);

  useEffect(() => {
    if (!apiKey || !calls) return;
    const due = calls.filter(
      (call) =>
        call.endedAt !== null && costs.get(call.id)?.status !== 'priced' && !reading.current.has(call.id) && (reads.current.get(call.id) ?? 0) < MAX_READS_PER_CALL && (notBefore.current.get(call.id) ?? 0) <= Date.now(),
    );
    const room = Math.max(0, CONCURRENT_READS - reading.current.size);
    for (const call of due.slice(0, room)) {
      reading.current.add(call.id);
      reads.current.set(call.id, (reads.current.get(call.id) ?? 0) + 1);
      api<CallCost>(`/v1/calls/${encodeURIComponent(call.id)}/cost`, { key: apiKey })
        .then(
          (cost) => {
            if (!mounted.current) return;
            setCosts((current) => new Map(current).set(call.id, cost));
            if (cost.status !== 'pending') return;
            notBefore.current.set(call.id, Date.now() + PENDING_RETRY_MS);
            const timer = setTimeout(() => {
              retryTimers.current.delete(timer);
              setRetries((count) => count + 1);
            }, PENDING_RETRY_MS);
            retryTimers.current.add(timer);
          },
          // The cell stays empty; a later change of the list tries again (bounded, not at once).
          () => notBefore.current.set(call.id, Date.now() + PENDING_RETRY_MS),
        )
        .finally(() => {
          reading.current.delete(call.id);
          if (mounted.current) setRetries((count) => count + 1);
        });
    }
  }, [apiKey, calls, costs, retries]);

  return costs;
}
