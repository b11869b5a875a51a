import { EventSourceParserStream } from 'eventsource-parser/stream';
import { useEffect, useState } from 'react';
import { api, messageOf, type CallSummary, type Page } from './api';
import type { Session } from './session';

const RECONNECT_MS = 3_000;
const LIST_LIMIT = 50;

export type FeedState = 'connecting' | 'live' | 'reconnecting';

/**
 * The latest calls, kept current by `GET /v1/calls/live` (server-sent events). EventSource cannot
 * send an Authorization header, so the stream is read with fetch and parsed with
 * eventsource-parser. A dropped stream (the server ends it every 15 minutes, or a restart)
 * reconnects; the list is reloaded first, so nothing that changed meanwhile is missed.
 */
export function useLiveCalls(session: Session | undefined): { calls: CallSummary[] | undefined; state: FeedState; error: string | undefined } {
  const [calls, setCalls] = useState<CallSummary[]>();
  const [state, setState] = useState<FeedState>('connecting');
  const [error, setError] = useState<string>();

  useEffect(() => {
    if (!session) return;
    const aborted = new AbortController();
    const merge = (call: CallSummary) =>
      setCalls((current = []) => {
        const others = current.filter((existing) => existing.id !== call.id);
        return [call, ...others].sort((a, b) => b.startedAt.localeCompare(a.startedAt)).slice(0, LIST_LIMIT);
      });

    const run = async () => {
      while (!aborted.signal.aborted) {
        try {
          const page = await api<Page<CallSummary>>(`/v1/calls?limit=${LIST_LIMIT}`, { key: session.key });
          setCalls(page.data);
          setError(undefined);
          const response = await fetch('/v1/calls/live', { headers: { authorization: `Bearer ${session.key}`, accept: 'text/event-stream' }, signal: aborted.signal });
          if (!response.ok || !response.body) throw new Error(`live feed: the server answered ${response.status}`);
          setState('live');
          const events = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
          for await (const event of events as unknown as AsyncIterable<{ event?: string; data: string }>) {
            if (event.event === 'call') merge(JSON.parse(event.data) as CallSummary);
          }
        } catch (caught) {
          if (aborted.signal.aborted) return;
          setError(messageOf(caught));
        }
        setState('reconnecting');
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
      }
    };
    void run();
    return () => aborted.abort();
  }, [session]);

  return { calls, state, error };
}
