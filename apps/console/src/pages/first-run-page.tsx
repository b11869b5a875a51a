import { useEffect, useRef, useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { api, ApiError, type AgentSummary, type CurrentKey, type Page } from '../api';
import { useSession } from '../session';

interface ClaimedKey {
  apiKey: string;
  apiKeyId: string;
  prefix: string;
  organizationId: string;
}

/**
 * The printed first-run link lands here: the link is spent at once and the new admin key is shown
 * this one time, to copy, before the console is entered with it.
 */
export function FirstRunPage() {
  const { token = '' } = useParams();
  const { setSession } = useSession();
  const navigate = useNavigate();
  const [claimed, setClaimed] = useState<ClaimedKey>();
  const [error, setError] = useState<string>();
  const [copied, setCopied] = useState(false);
  /** The agents the first run made (the echo agent, and a pipeline agent when the server had engines for one). */
  const [agents, setAgents] = useState<AgentSummary[]>();
  // The link works once: never post it twice (a re-render or a second effect run must not spend it again).
  const posted = useRef(false);

  useEffect(() => {
    if (posted.current) return;
    posted.current = true;
    api<ClaimedKey>('/console/first-run', { method: 'POST', body: { token } })
      .then(setClaimed)
      .catch((caught: unknown) => setError(caught instanceof ApiError ? caught.message : String(caught)));
    // Take the token out of the address bar and the history.
    window.history.replaceState(null, '', '#/first-run/used');
  }, [token]);

  useEffect(() => {
    if (!claimed) return;
    api<Page<AgentSummary>>('/v1/agents?limit=100', { key: claimed.apiKey })
      .then((page) => setAgents(page.data))
      .catch(() => setAgents([]));
  }, [claimed]);

  const enter = async () => {
    if (!claimed) return;
    const current = await api<CurrentKey>('/v1/api-keys/current', { key: claimed.apiKey });
    setSession({ key: claimed.apiKey, current });
    void navigate('/agents');
  };

  return (
    <div className="centered">
      <div className="card wide">
        <h1>Welcome to Switchboard</h1>
        {!claimed && !error && <p>Creating your admin key…</p>}
        {error && (
          <>
            <p className="error" role="alert">
              {error}
            </p>
            <a href="#/sign-in">Sign in with an API key</a>
          </>
        )}
        {claimed && (
          <>
            <p>
              This is your organization's <strong>admin API key</strong>. It is shown <strong>only this once</strong>: the server keeps only its hash. Copy it
              somewhere safe; you need it to sign in again and to use the API.
            </p>
            <div className="secret">
              <code data-testid="new-api-key">{claimed.apiKey}</code>
              <button
                type="button"
                onClick={() => {
                  void navigator.clipboard?.writeText(claimed.apiKey).then(() => setCopied(true));
                }}
              >
                {copied ? 'Copied' : 'Copy'}
              </button>
            </div>
            {agents && agents.length > 0 && (
              <div data-testid="first-run-agents">
                <p>
                  Ready to talk to from the browser (press <strong>Talk</strong> next to one on the Agents page):{' '}
                  {agents.map((agent, index) => (
                    <span key={agent.id}>
                      {index > 0 && ', '}
                      <strong>{agent.name}</strong> ({agent.engine === 'echo' ? 'your own voice back' : `a ${agent.engine} agent`})
                    </span>
                  ))}
                  .
                </p>
                {!agents.some((agent) => agent.engine === 'pipeline') && (
                  <p>
                    For an agent that listens and answers (a <code>pipeline</code> agent), set <code>OPENAI_API_KEY</code> (or store your key with{' '}
                    <code>npm run secrets -- set openai-api-key</code>) and restart the server: it then makes one. <code>npm run models -- pull whisper-base.en</code> makes its speech recognition local; with{' '}
                    <code>npm run models -- pull qwen2.5-0.5b-instruct</code> too, the restart makes a <strong>Local assistant</strong> that needs no key. The server's log says what is missing.
                  </p>
                )}
              </div>
            )}
            <button type="button" className="primary" onClick={() => void enter()}>
              I have copied it: open the console
            </button>
          </>
        )}
      </div>
    </div>
  );
}
