import { useEffect, useState } from 'react';
import { api, type CallDetail } from '../api';

/**
 * A live call's transcript reaches the API within a second of each turn (the server flushes its
 * records every 0.5 s), so the Talk panel reads the call's record this often while it is live.
 */
const FOLLOW_MS = 1_000;
/**
 * After the page's socket closed, the server may take a moment to write the call's end: the record
 * is read until it shows the end, this many more times at most (then the panel says what it knows).
 */
const AFTER_END_READS = 10;

/**
 * The call record of a call this page is on: read every second from when it exists until it has
 * ended (a bounded number of reads after the page saw the end). Undefined until the first read.
 */
export function useFollowedCall(apiKey: string, callId: string | undefined, pageSawEnd: boolean): CallDetail | undefined {
  const [detail, setDetail] = useState<CallDetail>();

  useEffect(() => {
    setDetail(undefined);
    if (!callId) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let readsAfterEnd = 0;
    const read = async () => {
      let ended = false;
      try {
        const current = await api<CallDetail>(`/v1/calls/${encodeURIComponent(callId)}`, { key: apiKey });
        if (stopped) return;
        setDetail(current);
        ended = current.endedAt !== null;
      } catch {
        // A read that failed is retried on the next tick; the call itself goes on regardless.
      }
      if (stopped || ended) return;
      if (pageSawEnd && ++readsAfterEnd > AFTER_END_READS) return;
      timer = setTimeout(() => void read(), FOLLOW_MS);
    };
    void read();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [apiKey, callId, pageSawEnd]);

  return detail;
}
