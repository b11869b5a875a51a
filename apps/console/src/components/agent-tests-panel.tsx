import { useCallback, useEffect, useState, type ChangeEvent } from 'react';
import { Link } from 'react-router';
import { api, messageOf } from '../api';
import { ErrorAlert } from './error-alert';

interface SuiteSummary {
  id: string;
  name: string;
  scenarioCount: number;
  turnCount: number;
  updatedAt: string;
}

interface TurnResult {
  said: string;
  heard: string;
  reply: string;
  failures: string[];
}

interface ScenarioResult {
  scenario: string;
  passed: boolean;
  callId: string | null;
  error: string | null;
  turns: TurnResult[];
}

interface TestRun {
  id: string;
  suiteName: string;
  agentConfigVersion: number;
  status: 'running' | 'passed' | 'failed' | 'error';
  error: string | null;
  passed: number;
  scenarioCount: number;
  results: ScenarioResult[];
  createdAt: string;
}

/** While a run is going, its results are re-read this often (each scenario is a real-time call). */
const RUNNING_POLL_MS = 2_000;

/**
 * An agent's scenario tests: its suites (stored with POST .../tests or `npm run agents -- test`), a
 * Run button per suite for admin keys, and the latest runs with, per failed scenario, each failed
 * turn's words and expectations.
 */
export function AgentTestsPanel({ apiKey, agentId, writable }: { apiKey: string; agentId: string; writable: boolean }) {
  const [suites, setSuites] = useState<SuiteSummary[]>();
  const [runs, setRuns] = useState<TestRun[]>([]);
  const [error, setError] = useState<string>();

  const load = useCallback(async () => {
    try {
      const [suiteList, runList] = await Promise.all([
        api<{ data: SuiteSummary[] }>(`/v1/agents/${agentId}/tests`, { key: apiKey }),
        api<{ data: TestRun[] }>(`/v1/agents/${agentId}/tests/runs`, { key: apiKey }),
      ]);
      setSuites(suiteList.data);
      setRuns(runList.data);
      setError(undefined);
    } catch (caught) {
      setError(messageOf(caught));
    }
  }, [apiKey, agentId]);

  useEffect(() => void load(), [load]);
  const anyRunning = runs.some((run) => run.status === 'running');
  useEffect(() => {
    if (!anyRunning) return undefined;
    const timer = setInterval(() => void load(), RUNNING_POLL_MS);
    return () => clearInterval(timer);
  }, [anyRunning, load]);

  const run = async (suiteId: string) => {
    try {
      await api(`/v1/agents/${agentId}/tests/run`, { key: apiKey, method: 'POST', body: { suiteId } });
      await load();
    } catch (caught) {
      setError(messageOf(caught));
    }
  };

  const upload = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    event.target.value = '';
    if (!file) return;
    try {
      await api(`/v1/agents/${agentId}/tests`, { key: apiKey, method: 'POST', body: JSON.parse(await file.text()) as unknown });
      await load();
    } catch (caught) {
      setError(`${file.name}: ${messageOf(caught)}`);
    }
  };

  return (
    <section className="agent-tests" data-testid="agent-tests">
      <h2>Scenario tests</h2>
      <ErrorAlert message={error} />
      {suites && suites.length === 0 && <p className="empty">No suites yet. Store one with POST /v1/agents/{agentId}/tests or `npm run agents -- test`.</p>}
      {suites && suites.length > 0 && (
        <table data-testid="suites-table">
          <thead>
            <tr>
              <th>Suite</th>
              <th>Scenarios</th>
              <th>Turns</th>
              <th>Updated</th>
              {writable && <th />}
            </tr>
          </thead>
          <tbody>
            {suites.map((suite) => (
              <tr key={suite.id}>
                <td>{suite.name}</td>
                <td>{suite.scenarioCount}</td>
                <td>{suite.turnCount}</td>
                <td>{new Date(suite.updatedAt).toLocaleString()}</td>
                {writable && (
                  <td>
                    <button type="button" onClick={() => void run(suite.id)} aria-label={`Run ${suite.name}`}>
                      Run
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {writable && (
        <label className="upload">
          Add or replace a suite (JSON file){' '}
          <input type="file" accept="application/json,.json" onChange={(event) => void upload(event)} />
        </label>
      )}
      {runs.length > 0 && <h3>Runs</h3>}
      {runs.map((testRun) => (
        <details key={testRun.id} className={`test-run ${testRun.status}`} data-run-status={testRun.status} open={testRun === runs[0]}>
          <summary>
            {testRun.suiteName}: <strong>{testRun.status}</strong> ({testRun.passed} of {testRun.scenarioCount} passed, config v{testRun.agentConfigVersion}) —{' '}
            {new Date(testRun.createdAt).toLocaleString()}
          </summary>
          {testRun.error && <p className="error">{testRun.error}</p>}
          <ul>
            {testRun.results.map((result) => (
              <li key={result.scenario} className={result.passed ? 'pass' : 'fail'}>
                {result.passed ? 'PASS' : 'FAIL'} {result.scenario} {result.callId && <Link to={`/calls/${result.callId}`}>call</Link>}
                {result.error && <div className="error">{result.error}</div>}
                {result.turns.map((turn, index) =>
                  turn.failures.length === 0 ? null : (
                    <div key={index} className="turn-failure">
                      Turn {index + 1} “{turn.said}”: heard “{turn.heard}”, replied “{turn.reply}”
                      <ul>
                        {turn.failures.map((failure) => (
                          <li key={failure}>{failure}</li>
                        ))}
                      </ul>
                    </div>
                  ),
                )}
              </li>
            ))}
          </ul>
        </details>
      ))}
    </section>
  );
}
