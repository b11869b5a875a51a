import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { problemText, readinessOf } from '../agent-readiness';
import { api, ApiError, messageOf, type AgentDetail, type FieldProblem } from '../api';
import { ErrorAlert } from './error-alert';
import { fieldsForEngine, formSchemaFor, type SchemaNode } from './schema-form/form-schema';
import { placeProblems, type ConfigProblem } from './schema-form/problem-placement';
import { SchemaForm } from './schema-form/schema-form';

export const ENGINES = ['pipeline', 'realtime', 'echo'] as const;

export interface AgentEditorProps {
  apiKey: string;
  /** The agent to edit (its current config); absent for a new agent. */
  agent?: AgentDetail;
  /** Called when the form closes: with the agent as last saved, or nothing when closed without a save. */
  onDone(saved: AgentDetail | undefined): void;
  /**
   * Called after a save that left the agent not ready to take calls: the form stays open showing
   * what to fix (and saves again to the same agent).
   */
  onSaved?(saved: AgentDetail): void;
}

/** The config's JSON Schema is the same for every key and for the life of the server: fetched once. */
let schemaRequest: Promise<SchemaNode> | undefined;
function loadConfigSchema(apiKey: string): Promise<SchemaNode> {
  schemaRequest ??= api<SchemaNode>('/v1/agents/config-schema', { key: apiKey }).catch((error: unknown) => {
    schemaRequest = undefined;
    throw error;
  });
  return schemaRequest;
}

/**
 * Creates an agent or edits one (a save of a changed config is a new version). The config is
 * edited in a form generated from the server's JSON Schema of it, showing the fields the engine
 * reads, or as JSON for power users. A 400's problems are shown at their fields; the ones no
 * field shows (another engine's settings, the config as a whole) in a summary above the form.
 */
export function AgentEditor({ apiKey, agent, onDone, onSaved }: AgentEditorProps) {
  /** The agent as this form last saved it (a created agent is edited from then on). */
  const [saved, setSaved] = useState<AgentDetail>();
  const target = saved ?? agent;
  const [schema, setSchema] = useState<SchemaNode>();
  const [name, setName] = useState(agent?.name ?? '');
  const [engine, setEngine] = useState<string>(agent?.engine ?? 'pipeline');
  /** The whole config: the form edits the engine's fields of it, the JSON view all of it. */
  const [config, setConfig] = useState<Record<string, unknown>>(agent?.config ?? {});
  const [view, setView] = useState<'form' | 'json'>('form');
  const [jsonText, setJsonText] = useState('');
  const [jsonError, setJsonError] = useState<string>();
  const [fieldProblems, setFieldProblems] = useState<FieldProblem[]>([]);
  const [configProblems, setConfigProblems] = useState<ConfigProblem[]>([]);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let live = true;
    loadConfigSchema(apiKey).then(
      (loaded) => live && setSchema(loaded),
      (caught: unknown) => live && setError(`The config schema could not be loaded: ${messageOf(caught)}`),
    );
    return () => {
      live = false;
    };
  }, [apiKey]);

  const shown = useMemo(() => (schema ? fieldsForEngine(schema, engine) : []), [schema, engine]);
  const formSchema = useMemo(() => (schema ? formSchemaFor(schema, engine) : undefined), [schema, engine]);
  const formValue = useMemo(() => pick(config, shown), [config, shown]);
  const placed = useMemo(
    () => (formSchema && view === 'form' ? placeProblems(configProblems, formSchema, formValue) : { errors: {}, unplaced: configProblems }),
    [configProblems, formSchema, formValue, view],
  );

  const chooseEngine = (next: string) => {
    setEngine(next);
    // What another engine would have read is not kept: the form shows what will be saved.
    if (schema) setConfig((previous) => pick(previous, fieldsForEngine(schema, next)));
    setConfigProblems([]);
  };

  /** The JSON view's text as a config object, or undefined with the reason shown under it. */
  const parseJson = (): Record<string, unknown> | undefined => {
    try {
      const parsed: unknown = jsonText.trim() === '' ? {} : JSON.parse(jsonText);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
      setJsonError('The config must be a JSON object.');
    } catch (caught) {
      setJsonError(`Not valid JSON: ${messageOf(caught)}`);
    }
    return undefined;
  };

  const switchView = (next: 'form' | 'json') => {
    if (next === view) return;
    setJsonError(undefined);
    if (next === 'json') {
      setJsonText(JSON.stringify(config, null, 2));
      setView('json');
      return;
    }
    const parsed = parseJson();
    if (!parsed) return;
    setConfig(parsed);
    setView('form');
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setFieldProblems([]);
    setConfigProblems([]);
    setJsonError(undefined);
    setError(undefined);
    let submitted = config;
    if (view === 'json') {
      const parsed = parseJson();
      if (!parsed) return;
      submitted = parsed;
      setConfig(parsed);
    }
    setBusy(true);
    try {
      const result = target
        ? await api<AgentDetail>(`/v1/agents/${target.id}`, { key: apiKey, method: 'PATCH', body: { ...(name !== target.name ? { name } : {}), config: submitted } })
        : await api<AgentDetail>('/v1/agents', { key: apiKey, method: 'POST', body: { name, engine, config: submitted } });
      if (readinessOf(result).ready) {
        onDone(result);
        return;
      }
      setSaved(result);
      onSaved?.(result);
    } catch (caught) {
      if (caught instanceof ApiError && caught.details.length > 0) {
        // The API names config problems `config.<path>` (see api.ts); the rest are the request's own fields.
        setConfigProblems(caught.details.filter((problem) => isConfigField(problem.field)).map((problem) => ({ path: problem.field.replace(/^config\.?/, ''), message: problem.message })));
        setFieldProblems(caught.details.filter((problem) => !isConfigField(problem.field)));
      } else {
        setError(messageOf(caught));
      }
    } finally {
      setBusy(false);
    }
  };

  const at = (field: string) => fieldProblems.filter((problem) => problem.field === field);
  const others = fieldProblems.filter((problem) => problem.field !== 'name' && problem.field !== 'engine');
  return (
    <form className="card form wide" noValidate onSubmit={(event) => void submit(event)} data-testid={agent ? 'edit-agent-form' : 'new-agent-form'}>
      <h2>{target ? `Edit ${target.name}` : 'New agent'}</h2>
      <label>
        Name
        <input name="name" value={name} onChange={(event) => setName(event.target.value)} />
        <Problems problems={at('name')} />
      </label>
      {target ? (
        <p className="hint">
          Engine: <strong>{target.engine}</strong> (fixed when the agent was made)
        </p>
      ) : (
        <label>
          Engine
          <select name="engine" value={engine} onChange={(event) => chooseEngine(event.target.value)}>
            {ENGINES.map((option) => (
              <option key={option} value={option}>
                {option}
              </option>
            ))}
          </select>
          <Problems problems={at('engine')} />
        </label>
      )}
      <div className="config-head">
        <h3>Config</h3>
        <div className="segmented" role="group" aria-label="Edit the config as">
          <button type="button" aria-pressed={view === 'form'} onClick={() => switchView('form')}>
            Form
          </button>
          <button type="button" aria-pressed={view === 'json'} onClick={() => switchView('json')}>
            JSON
          </button>
        </div>
      </div>
      <ReadinessNote agent={target} justSaved={saved !== undefined} />
      <ProblemSummary unplaced={[...others.map((problem) => ({ path: problem.field, message: problem.message })), ...placed.unplaced]} placedCount={configProblems.length - placed.unplaced.length} />
      {view === 'json' ? (
        <label>
          Config (JSON)
          <textarea
            name="config"
            rows={16}
            value={jsonText}
            onChange={(event) => {
              setJsonText(event.target.value);
              setJsonError(undefined);
            }}
            spellCheck={false}
          />
          {jsonError && (
            <ul className="field-errors" role="alert">
              <li>{jsonError}</li>
            </ul>
          )}
        </label>
      ) : !formSchema ? (
        <p className="empty">Loading the config's fields…</p>
      ) : shown.length === 0 ? (
        <p className="hint">The {engine} engine reads no config fields.</p>
      ) : (
        <SchemaForm key={engine} schema={formSchema} value={formValue} onChange={(next) => setConfig((previous) => ({ ...omit(previous, shown), ...next }))} errors={placed.errors} idPrefix="config" />
      )}
      <ErrorAlert message={error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          {target ? 'Save' : 'Create'}
        </button>
        <button type="button" className="link" onClick={() => onDone(saved)}>
          {saved ? 'Close' : 'Cancel'}
        </button>
      </div>
    </form>
  );
}

function isConfigField(field: string): boolean {
  return field === 'config' || field.startsWith('config.');
}

function pick(value: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((key) => key in value).map((key) => [key, value[key]]));
}

function omit(value: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([key]) => !keys.includes(key)));
}

function Problems({ problems }: { problems: FieldProblem[] }) {
  if (problems.length === 0) return null;
  return (
    <ul className="field-errors" role="alert">
      {problems.map((problem) => (
        <li key={`${problem.field}:${problem.message}`}>{problem.message}</li>
      ))}
    </ul>
  );
}

/**
 * What keeps the agent from taking calls (saved, but e.g. no API key for its engines): after a
 * save, and from the start when the form opens on such an agent. Nothing for a ready agent.
 */
function ReadinessNote({ agent, justSaved }: { agent: AgentDetail | undefined; justSaved: boolean }) {
  const readiness = readinessOf(agent);
  if (!agent || readiness.ready) return null;
  return (
    <div className="warning" role="status" data-testid="agent-form-readiness">
      <p>{justSaved ? `Saved as version ${agent.version}, but this agent is not ready to take calls yet. Fix this and save again:` : 'This agent is not ready to take calls. Fix this and save:'}</p>
      <ul>
        {readiness.problems.map((problem) => (
          <li key={`${problem.path}:${problem.message}`}>{problemText(problem)}</li>
        ))}
      </ul>
    </div>
  );
}

/** Above the config: what no field shows, and how many problems are marked at their fields. */
function ProblemSummary({ unplaced, placedCount }: { unplaced: ConfigProblem[]; placedCount: number }) {
  if (unplaced.length === 0 && placedCount === 0) return null;
  return (
    <div className="problem-summary" role="alert" data-testid="config-problems">
      <p>Not saved.{placedCount > 0 && ` ${placedCount === 1 ? 'One problem is' : `${placedCount} problems are`} marked at ${placedCount === 1 ? 'its field' : 'their fields'} below.`}</p>
      {unplaced.length > 0 && (
        <ul className="field-errors">
          {unplaced.map((problem) => (
            <li key={`${problem.path}:${problem.message}`}>
              <code>{problem.path === '' ? 'config' : problem.path}</code> {problem.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
