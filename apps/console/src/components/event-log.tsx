import type { CallEvent } from '../api';
import { eventTone, eventTypeText, summarizeEvent } from '../event-summary';

/** When an event happened: seconds into the call, or the clock time for one recorded outside it. */
function when(event: CallEvent): string {
  return event.offsetMs === null ? new Date(event.at).toLocaleTimeString() : `${(event.offsetMs / 1000).toFixed(2)} s`;
}

/**
 * The call's event log as rows a reader can scan: when, what, and a line saying what it means;
 * the payload as the API gave it opens under its row. Errors and warnings are marked.
 */
export function EventLog({ events }: { events: CallEvent[] }) {
  if (events.length === 0) return <p className="empty">No events recorded.</p>;
  return (
    <table className="events" data-testid="events">
      <thead>
        <tr>
          <th className="number">At</th>
          <th>Event</th>
          <th>What happened</th>
        </tr>
      </thead>
      <tbody>
        {events.map((event) => {
          const tone = eventTone(event.type);
          const summary = summarizeEvent(event);
          return (
            <tr key={event.id} className={tone} data-event-type={event.type}>
              <td className="number at">{when(event)}</td>
              <td className="type">{eventTypeText(event.type)}</td>
              <td>
                <details className="event-payload">
                  <summary>{summary === '' ? <span className="hint">(no details)</span> : summary}</summary>
                  <pre>{JSON.stringify(event.payload, null, 2)}</pre>
                </details>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
