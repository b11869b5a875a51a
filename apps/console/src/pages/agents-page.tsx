import { ErrorAlert } from '../components/error-alert';
import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { api, messageOf, ApiError, type AgentSummary, type FieldProblem, type Page } from '../api';
import { TalkPanel } from '../components/talk-panel';
import { canWrite, useSession } from '../session';

const ENGINES = ['pipeline', 'realtime', 'echo'] as const;

/** The organization's agents; admins can create one (read keys see no write controls at all). */
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
        <NewAgentForm
          apiKey={session.key}
          onDone={(created) => {
            setCreating(false);
            if (created) void load();
          }}
        />
      )}
      {talkingTo && <TalkPanel key={talkingTo.id} apiKey={session.key} agentId={talkingTo.id} agentName={talkingTo.name} onClose={() => setTalkingTo(undefined)} />}
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
                <td>{agent.name}</td>
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

/** Field errors come from the API's 400 body (`details[].field`), shown next to the field they name. */
function NewAgentForm({ apiKey, onDone }: { apiKey: string; onDone(created: boolean): void }) {
  const [name, setName] = useState('');
  const [engine, setEngine] = useState<string>('pipeline');
  const [config, setConfig] = useState('{\n  "systemPrompt": "You are a helpful receptionist."\n}');
  const [problems, setProblems] = useState<FieldProblem[]>([]);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const at = (prefix: string) => problems.filter((problem) => problem.field === prefix || problem.field.startsWith(`${prefix}.`));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setProblems([]);
    setError(undefined);
    let parsed: unknown;
    try {
      parsed = config.trim() === '' ? undefined : JSON.parse(config);
    } catch (caught) {
      setProblems([{ field: 'config', rule: 'json', message: `Not valid JSON: ${messageOf(caught)}` }]);
      return;
    }
    setBusy(true);
    try {
      await api('/v1/agents', { key: apiKey, method: 'POST', body: { name, engine, ...(parsed === undefined ? {} : { config: parsed }) } });
      onDone(true);
    } catch (caught) {
      if (caught instanceof ApiError && caught.details.length > 0) setProblems(caught.details);
      else setError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="card form" onSubmit={(event) => void submit(event)} data-testid="new-agent-form">
      <h2>New agent</h2>
      <label>
        Name
        <input name="name" value={name} onChange={(event) => setName(event.target.value)} />
        <FieldErrors problems={at('name')} />
      </label>
      <label>
        Engine
        <select name="engine" value={engine} onChange={(event) => setEngine(event.target.value)}>
          {ENGINES.map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))}
        </select>
        <FieldErrors problems={at('engine')} />
      </label>
      <label>
        Config (JSON)
        <textarea name="config" rows={10} value={config} onChange={(event) => setConfig(event.target.value)} spellCheck={false} />
        <FieldErrors problems={at('config')} />
      </label>
      <ErrorAlert message={error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          Create
        </button>
        <button type="button" className="link" onClick={() => onDone(false)}>
          Cancel
        </button>
      </div>
    </form>
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

function FieldErrors({ problems }: { problems: FieldProblem[] }) {
  if (problems.length === 0) return null;
  return (
    <ul className="field-errors" role="alert">
      {problems.map((problem) => (
        <li key={`${problem.field}:${problem.message}`}>
          {problem.field.includes('.') ? <code>{problem.field}</code> : null} {problem.message}
        </li>
      ))}
    </ul>
  );
}
