import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { formatRunReport, type RunReportInput } from './scenario-report';

const POLL_MS = 1_000;
/** The longest the terminal waits for a run; the server bounds the run itself too. */
const RUN_WAIT_MS = 60 * 60_000;
const REQUEST_TIMEOUT_MS = 30_000;

export interface AgentTestCommandInput {
  agentId: string;
  suitePath: string;
  url: string;
  apiKey: string;
}

class AgentTestCommandError extends Error {}

/**
 * `npm run agents -- test <agent-id> <suite.json>`: stores the suite on the server (WAV files named
 * by turns are read and sent inline), runs it, waits for the result and prints the report.
 * Exit codes: 0 every scenario passed, 1 a scenario failed or the run could not complete.
 */
export async function runAgentTestCommand(input: AgentTestCommandInput, out: (line: string) => void): Promise<number> {
  try {
    const suite = await readSuite(input.suitePath);
    const api = apiClient(input);
    const stored = (await api('POST', `/v1/agents/${encodeURIComponent(input.agentId)}/tests`, suite)) as { id: string; name: string; scenarioCount: number };
    out(`running suite "${stored.name}" (${stored.scenarioCount} scenarios) against ${input.url} ...`);
    let run = (await api('POST', `/v1/agents/${encodeURIComponent(input.agentId)}/tests/run`, { suiteId: stored.id })) as RunReportInput;
    const deadline = Date.now() + RUN_WAIT_MS;
    while (run.status === 'running') {
      if (Date.now() > deadline) throw new AgentTestCommandError(`the run ${run.id} did not finish within ${RUN_WAIT_MS / 60_000} minutes`);
      await new Promise((done) => setTimeout(done, POLL_MS));
      run = (await api('GET', `/v1/agents/${encodeURIComponent(input.agentId)}/tests/runs/${run.id}`)) as RunReportInput;
    }
    for (const line of formatRunReport(run)) out(line);
    return run.status === 'passed' ? 0 : 1;
  } catch (error) {
    out(`error: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

/** The suite file, with every `"wav": "file"` turn replaced by its contents (`wavBase64`). */
async function readSuite(path: string): Promise<unknown> {
  let suite: { scenarios?: Array<{ turns?: Array<Record<string, unknown>> }> };
  try {
    suite = JSON.parse(await readFile(path, 'utf8')) as typeof suite;
  } catch (error) {
    throw new AgentTestCommandError(`cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  for (const scenario of suite.scenarios ?? []) {
    for (const turn of scenario.turns ?? []) {
      if (typeof turn.wav !== 'string') continue;
      const wavPath = resolve(dirname(path), turn.wav);
      const bytes = await readFile(wavPath).catch((error: NodeJS.ErrnoException) => {
        throw new AgentTestCommandError(`cannot read ${wavPath}: ${error.code ?? error.message}`);
      });
      delete turn.wav;
      turn.wavBase64 = bytes.toString('base64');
    }
  }
  return suite;
}

function apiClient(input: AgentTestCommandInput) {
  return async (method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> => {
    let response: Response;
    try {
      response = await fetch(`${input.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${input.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      throw new AgentTestCommandError(`cannot reach ${input.url}: ${error instanceof Error ? error.message : String(error)}`);
    }
    const text = await response.text();
    if (response.ok) return JSON.parse(text) as unknown;
    throw new AgentTestCommandError(`${method} ${path} answered ${response.status}: ${describeError(text)}`);
  };
}

/** The API's error body as one readable line, with every problem of an invalid suite. */
function describeError(text: string): string {
  try {
    const body = JSON.parse(text) as { message?: string; problems?: Array<{ path: string; message: string }>; details?: Array<{ field: string; message: string }> };
    const problems = [...(body.problems ?? []).map((p) => `${p.path}: ${p.message}`), ...(body.details ?? []).map((d) => `${d.field || '(root)'}: ${d.message}`)];
    return [body.message ?? text, ...problems].join('\n  - ');
  } catch {
    return text.slice(0, 500);
  }
}
