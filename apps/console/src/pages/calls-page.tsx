import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { useAgentNames } from '../agent-names';
import type { CallCost, CallSummary } from '../api';
import { agentLabel, callDurationMs, callOutcome, endReasonText, endReasonTone, formatDuration } from '../call-text';
import { ErrorAlert } from '../components/error-alert';
import { useCallCosts } from '../components/use-call-costs';
import { useLiveCalls } from '../live-calls';
import { formatTotal } from '../money';
import { useSession } from '../session';

/** A live call's duration ticks this often. */
const LIVE_TICK_MS = 1_000;

/** The latest calls, newest first, updated as they start, change and end (no reload). */
export function CallsPage() {
  const { session } = useSession();
  const { calls, state, error } = useLiveCalls(session);
  const agentNames = useAgentNames(session?.key);
  const costs = useCallCosts(session?.key, calls);
  const now = useNowWhile(calls?.some((call) => call.endedAt === null) ?? false);

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
        <table data-testid="calls-table" className="calls">
          <thead>
            <tr>
              <th>Started</th>
              <th>Agent</th>
              <th>Direction</th>
              <th>From</th>
              <th>To</th>
              <th>Status</th>
              <th className="number">Duration</th>
              <th className="number">Cost</th>
              <th>End reason</th>
            </tr>
          </thead>
          <tbody>
            {calls.map((call) => (
              <CallRow key={call.id} call={call} agent={agentLabel(call.agentId, agentNames)} cost={costs.get(call.id)} now={now} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function CallRow({ call, agent, cost, now }: { call: CallSummary; agent: string; cost: CallCost | undefined; now: number }) {
  const outcome = callOutcome(call);
  const web = call.direction === 'web';
  return (
    <tr data-call-id={call.id} className={outcome.tone === 'error' ? 'errored' : undefined}>
      <td>
        <Link to={`/calls/${call.id}`}>{new Date(call.startedAt).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' })}</Link>
      </td>
      <td data-column="agent">{agent}</td>
      <td>{web ? 'web (browser)' : call.direction}</td>
      <td>{web ? '—' : call.fromNumber}</td>
      <td>{web ? '—' : call.toNumber}</td>
      <td data-column="status">
        <span className={`status-badge ${outcome.tone}`}>{outcome.label}</span>
      </td>
      <td className="number" data-column="duration">
        {formatDuration(callDurationMs(call, now))}
      </td>
      <td className="number" data-column="cost" title={cost?.total ? `${cost.total} ${cost.currency ?? ''}` : undefined}>
        {call.endedAt === null ? '—' : cost?.status === 'priced' && cost.totalMicros !== null ? formatTotal(cost.totalMicros, cost.currency) : cost ? 'pending' : '…'}
      </td>
      <td data-column="end-reason" className={`reason ${call.endReason === null ? '' : endReasonTone(call.endReason)}`}>
        {call.endReason === null ? '—' : <span title={call.endReason}>{endReasonText(call.endReason)}</span>}
      </td>
    </tr>
  );
}

/** The time, ticking every second while `ticking` (a live call's duration grows), still otherwise. */
function useNowWhile(ticking: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    setNow(Date.now());
    if (!ticking) return;
    const timer = setInterval(() => setNow(Date.now()), LIVE_TICK_MS);
    return () => clearInterval(timer);
  }, [ticking]);
  return now;
}
