import { ErrorAlert } from '../components/error-alert';
import { useCallback, useEffect, useRef, useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, messageOf, type AgentSummary, type CallAnalysis, type CallDetail, type TranscriptTurn } from '../api';
import { callDurationMs, callOutcome, callTitle, endReasonText, formatDuration } from '../call-text';
import { CallAnalysisPanel } from '../components/call-analysis-panel';
import { CostLedger } from '../components/cost-ledger';
import { EventLog } from '../components/event-log';
import { callFailureText } from '../event-summary';
import { formatTotal } from '../money';
import { LatencyWaterfall } from '../components/latency-waterfall';
import { RecordingPlayer, type RecordingPlayerHandle } from '../components/recording-player';
import { canWrite, useSession } from '../session';

/** While the call is live its record grows; the page refreshes this often until it ends and is priced. */
const LIVE_REFRESH_MS = 2_000;
/** After the call, while its analysis is queued or running, the page refreshes as often for at most this long; then a Refresh button asks again. */
const ANALYSIS_REFRESH_LIMIT_MS = 60_000;

function analysing(analysis: CallAnalysis | null): boolean {
  return analysis !== null && (analysis.status === 'pending' || analysis.status === 'running');
}

/** The turn being heard at a moment of the call (ms since its startedAt): of turns that overlap there (a barge-in), the later one. */
function turnAt(transcript: TranscriptTurn[], callMs: number | null): number | undefined {
  if (callMs === null) return undefined;
  let found: number | undefined;
  for (const turn of transcript) if (turn.startMs <= callMs && callMs < turn.endMs) found = turn.index;
  return found;
}

/**
 * One call: its recording, what was said (and heard), tools, the latency of each reply, the event
 * log and what it cost. While the recording plays, the turn being heard is marked in the
 * transcript; clicking a turn moves the recording's playhead to the turn's start.
 */
export function CallPage() {
  const { id = '' } = useParams();
  const { session } = useSession();
  const [call, setCall] = useState<CallDetail>();
  const [error, setError] = useState<string>();
  /** The recording's playhead on the call's timeline (ms since startedAt); null while there is no recording to play. */
  const [playheadMs, setPlayheadMs] = useState<number | null>(null);
  const player = useRef<RecordingPlayerHandle>(null);
  /** Bumped to load the call again now (and refresh it again while its analysis is in progress). */
  const [reloads, setReloads] = useState(0);
  /** The page is refreshing the call until its analysis is done (false once it gave up waiting). */
  const [followingAnalysis, setFollowingAnalysis] = useState(false);
  /** The call's agent (undefined until read, or when it was deleted). */
  const [agent, setAgent] = useState<AgentSummary>();
  const agentId = call?.agentId ?? null;

  useEffect(() => {
    if (!session || agentId === null) return;
    let stopped = false;
    // A deleted agent (404) leaves the page naming it by id.
    api<AgentSummary>(`/v1/agents/${encodeURIComponent(agentId)}`, { key: session.key }).then(
      (found) => !stopped && setAgent(found),
      () => undefined,
    );
    return () => {
      stopped = true;
    };
  }, [session, agentId]);

  useEffect(() => {
    if (!session) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    /** When this load loop first saw the analysis in progress. */
    let analysisSince: number | undefined;
    const load = async () => {
      try {
        const detail = await api<CallDetail>(`/v1/calls/${encodeURIComponent(id)}`, { key: session.key });
        if (stopped) return;
        setCall(detail);
        setError(undefined);
        if (analysing(detail.analysis)) analysisSince ??= Date.now();
        const followAnalysis = analysing(detail.analysis) && Date.now() - (analysisSince ?? 0) < ANALYSIS_REFRESH_LIMIT_MS;
        setFollowingAnalysis(followAnalysis);
        if (detail.endedAt === null || detail.cost.status === 'pending' || followAnalysis) timer = setTimeout(() => void load(), LIVE_REFRESH_MS);
      } catch (caught) {
        if (!stopped) setError(messageOf(caught));
      }
    };
    void load();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [id, session, reloads]);

  const reload = useCallback(() => setReloads((count) => count + 1), []);
  // A re-run was queued: show it pending at once, then follow it.
  const analysisQueued = useCallback(() => {
    setCall((current) => (current?.analysis ? { ...current, analysis: { ...current.analysis, status: 'pending', error: null } } : current));
    setFollowingAnalysis(true);
    setReloads((count) => count + 1);
  }, []);

  if (error) return <ErrorAlert message={error} />;
  if (!call || !session) return <p className="empty">Loading…</p>;
  const seekable = playheadMs !== null;
  const heardTurn = turnAt(call.transcript, playheadMs);
  const outcome = callOutcome(call);
  const failure = callFailureText(call.endReason, call.events);
  return (
    <section className="call-page">
      <p>
        <Link to="/calls">← Calls</Link>
      </p>
      <h1 data-testid="call-title">{callTitle(call, agent?.name)}</h1>
      {failure && (
        <div className="problem-summary" role="alert" data-testid="call-failure">
          <p>This call ended on an error. {failure}</p>
        </div>
      )}
      <dl className="facts">
        <dt>Agent</dt>
        <dd data-testid="call-agent">
          {call.agentId === null ? '—' : agent ? <Link to={`/agents/${agent.id}`}>{agent.name}</Link> : <code>{call.agentId.slice(0, 8)}…</code>}
          {call.agentConfigVersion !== null && <span className="hint"> (config version {call.agentConfigVersion})</span>}
        </dd>
        <dt>Direction</dt>
        <dd>{call.direction === 'web' ? 'web (from the browser)' : call.direction}</dd>
        <dt>Status</dt>
        <dd data-testid="call-status">
          <span className={`status-badge ${outcome.tone}`}>{outcome.label}</span>
          {call.endedAt && (
            <>
              {' — '}
              {endReasonText(call.endReason)} (<code>{call.endReason ?? 'no reason recorded'}</code>)
            </>
          )}
        </dd>
        <dt>Started</dt>
        <dd>{new Date(call.startedAt).toLocaleString()}</dd>
        <dt>Duration</dt>
        <dd data-testid="call-duration">{call.endedAt ? formatDuration(callDurationMs(call, Date.now())) : `${formatDuration(callDurationMs(call, Date.now()))} so far`}</dd>
        <dt>Cost</dt>
        <dd data-testid="call-total" title={call.cost.total ? `${call.cost.total} ${call.cost.currency ?? ''}` : undefined}>
          {call.cost.status === 'priced' && call.cost.totalMicros !== null ? formatTotal(call.cost.totalMicros, call.cost.currency) : 'pending (priced when the call ends)'}
        </dd>
      </dl>

      <CallAnalysisPanel
        apiKey={session.key}
        callId={call.id}
        analysis={call.analysis}
        ended={call.endedAt !== null && call.cost.status === 'priced'}
        polling={followingAnalysis}
        writable={canWrite(session)}
        onRefresh={reload}
        onQueued={analysisQueued}
      />

      <RecordingPlayer
        key={call.id}
        ref={player}
        apiKey={session.key}
        callId={call.id}
        ended={call.endedAt !== null}
        writable={canWrite(session)}
        onPlayhead={setPlayheadMs}
      />

      <h2>Transcript</h2>
      {call.transcript.length === 0 ? (
        <p className="empty">Nothing was transcribed.</p>
      ) : (
        <ol className="transcript" data-testid="transcript">
          {call.transcript.map((turn) => (
            <li
              key={turn.index}
              data-turn-index={turn.index}
              className={[turn.role, seekable ? 'seekable' : '', turn.index === heardTurn ? 'heard' : ''].filter(Boolean).join(' ')}
              aria-current={turn.index === heardTurn ? 'true' : undefined}
              onClick={seekable ? () => player.current?.seekTo(turn.startMs) : undefined}
            >
              <span className="role">{turn.role}</span>
              {seekable ? (
                // For the keyboard: its click reaches the row's handler, which moves the playhead to the turn's start.
                <button type="button" className="at" aria-label={`Jump the recording to ${(turn.startMs / 1000).toFixed(1)} s`}>
                  ▶ {(turn.startMs / 1000).toFixed(1)} s
                </button>
              ) : (
                <span className="at">{(turn.startMs / 1000).toFixed(1)} s</span>
              )}
              {turn.interrupted ? (
                <span>
                  {turn.heardText ?? ''}
                  <span className="cut" title={turn.text}>
                    {' '}
                    — interrupted (heard {turn.heardText?.length ?? 0} of {turn.text.length} characters)
                  </span>
                </span>
              ) : (
                <span>{turn.text}</span>
              )}
            </li>
          ))}
        </ol>
      )}

      {call.toolInvocations.length > 0 && (
        <>
          <h2>Tool calls</h2>
          <table>
            <thead>
              <tr>
                <th>Tool</th>
                <th>Arguments</th>
                <th>Result</th>
                <th>Latency</th>
              </tr>
            </thead>
            <tbody>
              {call.toolInvocations.map((tool) => (
                <tr key={tool.id}>
                  <td>{tool.name}</td>
                  <td>
                    <code>{JSON.stringify(tool.arguments)}</code>
                  </td>
                  <td>{tool.error ? <span className="error">{tool.error}</span> : <code>{JSON.stringify(tool.result)}</code>}</td>
                  <td>{Math.round(tool.latencyMs)} ms</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}

      <h2>Latency per reply</h2>
      {call.latency.length === 0 ? <p className="empty">No replies measured.</p> : <LatencyWaterfall turns={call.latency} />}

      <h2>Cost ledger</h2>
      <CostLedger cost={call.cost} />

      <h2>Events</h2>
      <EventLog events={call.events} />
    </section>
  );
}
