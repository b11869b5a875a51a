import { useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { notReadyText, problemText, readinessOf } from '../agent-readiness';
import type { AgentReadiness, ConfigProblem } from '../api';
import { DecayingLevel } from '../audio-level';
import { endReasonText, endReasonTone } from '../call-text';
import { callFailureText } from '../event-summary';
import { BrowserWebCall, type WebCallEnd, type WebCallState } from '../web-call';
import { LevelMeter } from './level-meter';
import { TalkTranscript } from './talk-transcript';
import { useFollowedCall } from './use-followed-call';

/** How often the meters are redrawn while the call is live. */
const METER_REDRAW_MS = 100;

const STATE_TEXT: Record<WebCallState, string> = { idle: 'not started', connecting: 'connecting…', live: '● live', ended: 'ended', failed: 'failed' };

export interface TalkPanelProps {
  apiKey: string;
  agentId: string;
  agentName: string;
  /** As the agents list gave it; missing means ready (a server that does not report readiness). */
  readiness?: AgentReadiness;
  onClose(): void;
}

/**
 * "Talk to this agent": a call from the browser. While it is live: who is speaking (the microphone
 * and the agent, each a meter that falls back when quiet) and the transcript as the server records
 * it. When it ends: why, in words, with a link to the call's page. An agent that cannot take calls
 * says why instead of connecting.
 */
export function TalkPanel({ apiKey, agentId, agentName, readiness, onClose }: TalkPanelProps) {
  const [state, setState] = useState<WebCallState>('idle');
  const [callId, setCallId] = useState<string>();
  const [end, setEnd] = useState<WebCallEnd>();
  const [notice, setNotice] = useState<string>();
  const [levels, setLevels] = useState({ microphone: 0, agent: 0 });
  const meters = useRef({ microphone: new DecayingLevel(), agent: new DecayingLevel() });
  const call = useRef<BrowserWebCall>(undefined);
  const detail = useFollowedCall(apiKey, callId, end !== undefined);
  const live = state === 'connecting' || state === 'live';
  const notReady = end?.notReady ?? (readinessOf({ readiness }).ready ? undefined : readinessOf({ readiness }).problems);

  useEffect(() => () => call.current?.hangUp(), []);

  // The meters are read at a steady rate while the call is live (so a level falls back when the
  // sound stops, between readings) and rest at zero once it is over.
  useEffect(() => {
    if (!live) {
      meters.current.microphone.reset();
      meters.current.agent.reset();
      setLevels({ microphone: 0, agent: 0 });
      return;
    }
    const redraw = setInterval(() => {
      const now = performance.now();
      setLevels({ microphone: meters.current.microphone.read(now), agent: meters.current.agent.read(now) });
    }, METER_REDRAW_MS);
    return () => clearInterval(redraw);
  }, [live]);

  const start = () => {
    setCallId(undefined);
    setEnd(undefined);
    setNotice(undefined);
    const webCall = new BrowserWebCall(apiKey, {
      state: setState,
      callId: setCallId,
      agentLevel: (rms) => meters.current.agent.push(rms, performance.now()),
      microphoneLevel: (rms) => meters.current.microphone.push(rms, performance.now()),
      notice: setNotice,
      ended: setEnd,
    });
    call.current = webCall;
    void webCall.start(agentId);
  };

  return (
    <div className="card form talk" data-testid="talk-panel">
      <h2>Talk to {agentName}</h2>
      {notReady ? (
        <NotReady agentId={agentId} problems={notReady} />
      ) : (
        <p className="hint">Your microphone goes to the agent (echo cancellation on); its voice plays here. Speak over it to interrupt.</p>
      )}
      <div className="talk-row">
        {live ? (
          <button type="button" onClick={() => call.current?.hangUp()}>
            Hang up
          </button>
        ) : (
          !notReady && (
            <button type="button" className="primary" onClick={start}>
              {state === 'idle' ? 'Start call' : 'Call again'}
            </button>
          )
        )}
        <span data-testid="talk-state" className={`feed ${state === 'live' ? 'live' : ''}`}>
          {STATE_TEXT[state]}
        </span>
        {!live && (
          <button type="button" className="link" onClick={onClose}>
            Close
          </button>
        )}
      </div>
      {!notReady && (
        <div className="talk-meters">
          <LevelMeter who="You" level={levels.microphone} on={live} testId="microphone-level" />
          <LevelMeter who={agentName} level={levels.agent} on={live} testId="agent-level" />
        </div>
      )}
      {notice && live && (
        <p className="warning" data-testid="talk-notice">
          The server reported: {notice}
        </p>
      )}
      {end && !end.notReady && <EndNote end={end} endReason={detail?.endedAt ? detail.endReason : (end.reason ?? null)} failure={detail?.endedAt ? callFailureText(detail.endReason, detail.events) : undefined} callId={callId} />}
      {callId && (detail?.transcript.length ?? 0) > 0 && <TalkTranscript turns={detail!.transcript} live={live} />}
      {callId && live && (detail?.transcript.length ?? 0) === 0 && <p className="hint">The transcript shows here as you talk.</p>}
      {callId && (
        <p>
          <Link to={`/calls/${callId}`}>Open this call's page</Link>
        </p>
      )}
    </div>
  );
}

function NotReady({ agentId, problems }: { agentId: string; problems: ConfigProblem[] }) {
  return (
    <div className="problem-summary" role="alert" data-testid="talk-not-ready">
      <p>{notReadyText([])} Fix this first:</p>
      <ul className="field-errors">
        {problems.map((problem) => (
          <li key={`${problem.path}:${problem.message}`}>{problemText(problem)}</li>
        ))}
      </ul>
      <p>
        <Link to={`/agents/${agentId}`}>Open the agent's page</Link>
      </p>
    </div>
  );
}

/**
 * Why the call ended. An error (or an end the page could not explain) is shown as one, quoting
 * the error the call recorded once its record says so; a normal end is a quiet line.
 */
function EndNote({ end, endReason, failure, callId }: { end: WebCallEnd; endReason: string | null; failure: string | undefined; callId: string | undefined }) {
  const tone = failure ? 'error' : endReason === null ? (end.message ? 'error' : 'ok') : endReasonTone(endReason);
  if (tone === 'ok') {
    return (
      <p className="hint" data-testid="talk-end">
        Call ended ({endReasonText(endReason)}).{end.message ? ` The server said: ${end.message}` : ''}
      </p>
    );
  }
  const why = failure ?? (endReason !== null ? `The call ended: ${endReasonText(endReason)}.` : `The call could not go on: ${end.message ?? 'no reason given'}.`);
  return (
    <div className={tone === 'error' ? 'problem-summary' : 'warning'} role="alert" data-testid="talk-end">
      <p>
        {why}
        {end.message && failure ? ` The server said: ${end.message}` : ''}
        {callId && (
          <>
            {' '}
            <Link to={`/calls/${callId}`}>See the call's page</Link> for its event log.
          </>
        )}
      </p>
    </div>
  );
}
