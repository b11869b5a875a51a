import { useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { BrowserWebCall, type WebCallState } from '../web-call';

/** "Talk to this agent": a call from the browser, with the agent's level and a link to the call's page. */
export function TalkPanel({ apiKey, agentId, agentName, onClose }: { apiKey: string; agentId: string; agentName: string; onClose(): void }) {
  const [state, setState] = useState<WebCallState>('idle');
  const [detail, setDetail] = useState<string>();
  const [level, setLevel] = useState(0);
  const [peak, setPeak] = useState(0);
  const call = useRef<BrowserWebCall>(undefined);

  useEffect(() => () => call.current?.hangUp(), []);

  const start = () => {
    const webCall = new BrowserWebCall(apiKey, {
      state: (next, why) => {
        setState(next);
        setDetail(why);
      },
      agentLevel: (rms) => {
        setLevel(rms);
        setPeak((current) => Math.max(current, rms));
      },
    });
    call.current = webCall;
    void webCall.start(agentId);
  };

  const live = state === 'connecting' || state === 'live';
  return (
    <div className="card form talk" data-testid="talk-panel">
      <h2>Talk to {agentName}</h2>
      <p className="hint">Your microphone goes to the agent (echo cancellation on); its voice plays here. Speak over it to interrupt.</p>
      <div className="talk-row">
        {!live ? (
          <button type="button" className="primary" onClick={start}>
            {state === 'idle' ? 'Start call' : 'Call again'}
          </button>
        ) : (
          <button type="button" onClick={() => call.current?.hangUp()}>
            Hang up
          </button>
        )}
        <span data-testid="talk-state" className={`feed ${state === 'live' ? 'live' : ''}`}>
          {state}
        </span>
        <meter min={0} max={0.5} value={level} title="the agent's voice" />
        <span className="hint" data-testid="agent-peak" data-peak={peak.toFixed(4)}>
          agent peak {peak.toFixed(3)}
        </span>
        {!live && (
          <button type="button" className="link" onClick={onClose}>
            Close
          </button>
        )}
      </div>
      {detail && (
        // A call the server ended with a message (a restart's drain) is news, not an error.
        <p className={state === 'ended' ? 'hint' : 'error'} data-testid="talk-detail">
          {detail}
        </p>
      )}
      {call.current?.callId && (
        <p>
          <Link to={`/calls/${call.current.callId}`}>Open this call's page</Link>
        </p>
      )}
    </div>
  );
}
