import { useEffect, useState } from 'react';
import { api, type CallSummary, type Page } from '../api';
import { useSession } from '../session';

/** How often the list is refreshed while the page is open. */
const REFRESH_MS = 5_000;

/** The latest calls, newest first, refreshed every few seconds. */
export function CallsPage() {
  const { session } = useSession();
  const [calls, setCalls] = useState<CallSummary[]>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    if (!session) return;
    let stopped = false;
    const load = async () => {
      try {
        const page = await api<Page<CallSummary>>('/v1/calls?limit=50', { key: session.key });
        if (!stopped) {
          setCalls(page.data);
          setError(undefined);
        }
      } catch (caught) {
        if (!stopped) setError(caught instanceof Error ? caught.message : String(caught));
      }
    };
    void load();
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [session]);

  return (
    <section>
      <div className="section-head">
        <h1>Calls</h1>
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {calls && calls.length === 0 && <p className="empty">No calls yet.</p>}
      {calls && calls.length > 0 && (
        <table data-testid="calls-table">
          <thead>
            <tr>
              <th>Started</th>
              <th>Direction</th>
              <th>From</th>
              <th>To</th>
              <th>Status</th>
              <th>End reason</th>
            </tr>
          </thead>
          <tbody>
            {calls.map((call) => (
              <tr key={call.id}>
                <td>{new Date(call.startedAt).toLocaleString()}</td>
                <td>{call.direction}</td>
                <td>{call.fromNumber}</td>
                <td>{call.toNumber}</td>
                <td>{call.status}</td>
                <td>{call.endReason ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
