import { ErrorAlert } from '../components/error-alert';
import { Link } from 'react-router';
import { useLiveCalls } from '../live-calls';
import { useSession } from '../session';

/** The latest calls, newest first, updated as they start, change and end (no reload). */
export function CallsPage() {
  const { session } = useSession();
  const { calls, state, error } = useLiveCalls(session);

  return (
    <section>
      <div className="section-head">
        <h1>Calls</h1>
        <span className={`feed ${state}`} data-testid="feed-state">
          {state === 'live' ? '● live' : state === 'connecting' ? 'connecting…' : 'reconnecting…'}
        </span>
      </div>
      <ErrorAlert message={error} />
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
              <tr key={call.id} data-call-id={call.id}>
                <td>
                  <Link to={`/calls/${call.id}`}>{new Date(call.startedAt).toLocaleString()}</Link>
                </td>
                <td>{call.direction}</td>
                <td>{call.fromNumber}</td>
                <td>{call.toNumber}</td>
                <td>{call.endedAt ? call.status : <strong>{call.status} (live)</strong>}</td>
                <td>{call.endReason ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
