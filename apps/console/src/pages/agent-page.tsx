import { Suspense, useCallback, useEffect, useState } from 'react';
import { Link, useParams } from 'react-router';
import { problemText, readinessOf } from '../agent-readiness';
import { api, messageOf, type AgentDetail } from '../api';
import { AgentTestsPanel } from '../components/agent-tests-panel';
import { VersionCompare } from '../components/config-diff/version-compare';
import { ErrorAlert } from '../components/error-alert';
import { LazyAgentEditor } from '../components/lazy-agent-editor';
import { canWrite, useSession } from '../session';

/**
 * One agent: its engine and current config version, editing (admins: a saved change is a new
 * version), any two of its config versions side by side, and its scenario tests.
 */
export function AgentPage() {
  const { id = '' } = useParams();
  const { session } = useSession();
  const [agent, setAgent] = useState<AgentDetail>();
  const [error, setError] = useState<string>();
  const [editing, setEditing] = useState(false);
  /** Each opening of the form is a fresh form (a save that stays open must not remount it). */
  const [openings, setOpenings] = useState(0);

  const load = useCallback(async () => {
    if (!session) return;
    try {
      setAgent(await api<AgentDetail>(`/v1/agents/${encodeURIComponent(id)}`, { key: session.key }));
    } catch (caught) {
      setError(messageOf(caught));
    }
  }, [session, id]);

  useEffect(() => {
    void load();
  }, [load]);

  if (!session) return null;
  return (
    <section className="agent-page">
      <p>
        <Link to="/agents">← Agents</Link>
      </p>
      <ErrorAlert message={error} />
      {agent && (
        <>
          <div className="section-head">
            <h1>{agent.name}</h1>
            {canWrite(session) && !editing && (
              <button
                type="button"
                className="primary"
                onClick={() => {
                  setOpenings((count) => count + 1);
                  setEditing(true);
                }}
              >
                Edit
              </button>
            )}
          </div>
          <dl className="facts">
            <dt>Engine</dt>
            <dd>{agent.engine}</dd>
            <dt>Config version</dt>
            <dd data-testid="agent-version">{agent.version}</dd>
            <dt>Updated</dt>
            <dd>{new Date(agent.updatedAt).toLocaleString()}</dd>
            <dt>Takes calls</dt>
            <dd data-testid="agent-readiness">{readinessOf(agent).ready ? 'yes, ready' : <span className="status-badge error">not ready</span>}</dd>
          </dl>
          {!readinessOf(agent).ready && (
            <div className="warning" data-testid="agent-problems">
              <p>This agent cannot take calls until this is fixed{canWrite(session) ? ' (Edit, then save)' : ''}:</p>
              <ul>
                {readinessOf(agent).problems.map((problem) => (
                  <li key={`${problem.path}:${problem.message}`}>{problemText(problem)}</li>
                ))}
              </ul>
            </div>
          )}
          {editing && canWrite(session) && (
            <Suspense fallback={<p className="empty">Loading the form…</p>}>
              <LazyAgentEditor
                key={openings}
                apiKey={session.key}
                agent={agent}
                onDone={(saved) => {
                  setEditing(false);
                  if (saved) setAgent(saved);
                }}
                onSaved={setAgent}
              />
            </Suspense>
          )}
          <h2>Config versions</h2>
          <VersionCompare apiKey={session.key} agentId={agent.id} latest={agent.version} />
          <AgentTestsPanel apiKey={session.key} agentId={agent.id} writable={canWrite(session)} />
        </>
      )}
    </section>
  );
}
