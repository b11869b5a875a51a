import { ErrorAlert } from '../components/error-alert';
import { Suspense, useCallback, useEffect, useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { notReadyText, readinessOf } from '../agent-readiness';
import { api, messageOf, ApiError, type AgentSummary, type Page } from '../api';
import { LazyAgentEditor } from '../components/lazy-agent-editor';
import { TalkPanel } from '../components/talk-panel';
import { canWrite, useSession } from '../session';

/**
 * The organization's agents, each linking to its page (config versions side by side, editing);
 * admins can create one here (read keys see no write controls at all).
 */
export function AgentsPage() {
  const { session } = useSession();
  const [agents, setAgents] = useState<AgentSummary[]>();
  const [error, setError] = useState<string>();
  const [creating, setCreating] = useState(false);
  const [talkingTo, setTalkingTo] = useState<AgentSummary>();
  const [numbers, setNumbers] = useState<PhoneNumber[]>([]);

  const load = useCallback(async () => {
    if (!session) return;
    try {
      const [page, bound] = await Promise.all([
        api<Page<AgentSummary>>('/v1/agents?limit=100', { key: session.key }),
        api<Page<PhoneNumber>>('/v1/phone-numbers?limit=100', { key: session.key }),
      ]);
      setAgents(page.data);
      setNumbers(bound.data);
    } catch (caught) {
      setError(messageOf(caught));
    }
  }, [session]);

  useEffect(() => {
    void load();
  }, [load]);

  if (!session) return null;
  return (
    <section>
      <div className="section-head">
        <h1>Agents</h1>
        {canWrite(session) && !creating && (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            New agent
          </button>
        )}
      </div>
      {creating && (
        <Suspense fallback={<p className="empty">Loading the form…</p>}>
          <LazyAgentEditor
            apiKey={session.key}
            onDone={(created) => {
              setCreating(false);
              if (created) void load();
            }}
            // Created but not ready: the form stays open with what to fix; the list shows the agent already.
            onSaved={() => void load()}
          />
        </Suspense>
      )}
      {talkingTo && (
        <TalkPanel key={talkingTo.id} apiKey={session.key} agentId={talkingTo.id} agentName={talkingTo.name} readiness={talkingTo.readiness} onClose={() => setTalkingTo(undefined)} />
      )}
      <ErrorAlert message={error} />
      {agents && agents.length === 0 && <p className="empty">No agents yet.</p>}
      {agents && agents.length > 0 && (
        <table data-testid="agents-table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Engine</th>
              <th>Config version</th>
              <th>Updated</th>
              <th>Numbers</th>
              {canWrite(session) && <th />}
            </tr>
          </thead>
          <tbody>
            {agents.map((agent) => (
              <tr key={agent.id}>
                <td>
                  <Link to={`/agents/${agent.id}`}>{agent.name}</Link>
                  <NotReadyBadge agent={agent} />
                </td>
                <td>{agent.engine}</td>
                <td>{agent.version}</td>
                <td>{new Date(agent.updatedAt).toLocaleString()}</td>
                <td data-testid={`numbers-${agent.id}`}>
                  {numbers
                    .filter((number) => number.agentId === agent.id)
                    .map((number) => number.e164)
                    .join(', ')}
                  {canWrite(session) && <BindNumber apiKey={session.key} agentId={agent.id} agentName={agent.name} onBound={() => void load()} />}
                </td>
                {canWrite(session) && (
                  <td>
                    <button type="button" onClick={() => setTalkingTo(agent)} aria-label={`Talk to ${agent.name}`}>
                      Talk
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** "not ready" beside an agent that cannot take calls as configured; what to fix is in its title and on its page. */
function NotReadyBadge({ agent }: { agent: AgentSummary }) {
  const readiness = readinessOf(agent);
  if (readiness.ready) return null;
  return (
    <span className="badge not-ready" title={notReadyText(readiness.problems)} data-testid={`not-ready-${agent.id}`}>
      not ready
    </span>
  );
}

interface PhoneNumber {
  id: string;
  e164: string;
  agentId: string | null;
}

/** Binds one of the organization's numbers to the agent (a number bound elsewhere moves here). */
function BindNumber({ apiKey, agentId, agentName, onBound }: { apiKey: string; agentId: string; agentName: string; onBound(): void }) {
  const [open, setOpen] = useState(false);
  const [e164, setE164] = useState('');
  const [error, setError] = useState<string>();
  if (!open) {
    return (
      <button type="button" className="link" onClick={() => setOpen(true)} aria-label={`Bind a number to ${agentName}`}>
        Bind number
      </button>
    );
  }
  const save = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    try {
      await api('/v1/phone-numbers', { key: apiKey, method: 'POST', body: { e164: e164.trim(), agentId } });
      setOpen(false);
      setE164('');
      onBound();
    } catch (caught) {
      setError(caught instanceof ApiError && caught.details.length > 0 ? caught.details.map((problem) => problem.message).join('; ') : messageOf(caught));
    }
  };
  return (
    <form className="bind-number" onSubmit={(event) => void save(event)}>
      <input aria-label={`Number for ${agentName}`} value={e164} onChange={(event) => setE164(event.target.value)} placeholder="+14155550100" />
      <button type="submit">Save</button>
      <ErrorAlert message={error} />
    </form>
  );
}
