/**
 * Scenario tests of an agent, end to end: a suite stored through the API, run through the
 * simulated caller (the built-in voice speaking over this server's own web-call socket) against a
 * pipeline agent whose engines are local OpenAI-compatible fakes; one scenario passes and one
 * fails, and the stored results say which expectations failed. The CLI does the same from another
 * process and exits non-zero on a failure.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sineTone } from '@switchboard/audio';
import { AgentTestRepository } from '@switchboard/persistence';
import { type FakeChatReply, FakeOpenAiServer, type RecordedRequest } from '@switchboard/testing';
import { createOtherOrganizationKey, createRepositories, createTestPrisma } from '../support/database';
import { openApiContract } from '../support/openapi-contract';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

jest.setTimeout(240_000);

const TRANSFER_TO = '+15550100999';

const organizationIdOf = (response: { body: { organizationId: string } }) => response.body.organizationId;

function lastUserMessage(request: RecordedRequest): string {
  const messages = (request.json as { messages: { role: string; content: string | null }[] }).messages;
  return [...messages].reverse().find((message) => message.role === 'user')?.content ?? '';
}

/** The agent's model: answers by what it heard (the fake recogniser's text), as a scripted LLM would. */
function agentModel(request: RecordedRequest): FakeChatReply {
  const messages = (request.json as { messages: { role: string }[] }).messages;
  if (messages.at(-1)?.role === 'tool') return { text: ['One moment.'] };
  const heard = lastUserMessage(request);
  if (heard.includes('open')) return { text: ['We open at nine', ' in the morning.'] };
  if (heard.includes('person')) return { toolCalls: [{ id: 'call_transfer', name: 'transfer_call', arguments: JSON.stringify({ destination: TRANSFER_TO }) }] };
  return { text: ['Have a nice day!'] };
}

const SUITE = {
  name: 'front desk',
  turnTimeoutMs: 8_000,
  scenarios: [
    {
      name: 'hours, then a person',
      turns: [
        { say: 'What time do you open?', expect: { replyIncludes: ['nine'], replyExcludes: ['sorry'] } },
        {
          say: 'I would like to talk to a person.',
          expect: {
            toolCalls: [{ name: 'transfer_call', arguments: { type: 'object', required: ['destination'], properties: { destination: { const: TRANSFER_TO } } } }],
            transfer: { to: TRANSFER_TO },
          },
        },
      ],
    },
    {
      name: 'expects what the agent does not do',
      turns: [
        { say: 'What time do you open?', expect: { replyIncludes: ['ten'] } },
        { say: 'Thanks, goodbye.', expect: { endsCall: true } },
      ],
    },
  ],
};

describe('scenario tests for agents (e2e)', () => {
  let server: TestServer;
  let engines: FakeOpenAiServer;
  let agentId: string;
  /** What the fake recogniser hears next: the caller's turns, in order (the runner speaks one at a time). */
  const heardQueue: string[] = [];

  beforeAll(async () => {
    const tone = sineTone({ frequencyHz: 440, sampleRate: 24_000, durationMs: 700, amplitudeDbfs: -12 });
    engines = await FakeOpenAiServer.start({
      transcription: () => ({ text: heardQueue.shift() ?? 'hello' }),
      chat: (request) => agentModel(request),
      speech: () => ({ pcm: tone }),
    });
    server = await startTestServer();
    const remote = { provider: 'openai', baseUrl: engines.baseUrl };
    const created = await server.api('/v1/agents', {
      method: 'POST',
      body: {
        name: 'front desk',
        engine: 'pipeline',
        config: {
          firstMessage: null,
          stt: { ...remote, model: 'whisper-1' },
          llm: { ...remote, model: 'gpt-test' },
          tts: { ...remote, model: 'tts-test', voice: 'alloy' },
          tools: [{ type: 'transfer_call', destinations: [{ number: TRANSFER_TO, label: 'reception' }] }],
        },
      },
    });
    expect(created.status).toBe(201);
    agentId = created.body.id as string;
  });

  afterAll(async () => {
    await server?.close();
    await engines?.close();
  });

  const expectHeard = (...texts: string[]) => heardQueue.push(...texts);

  it('refuses a suite with an unusable expected-arguments schema, at its path', async () => {
    const bad = structuredClone(SUITE);
    (bad.scenarios[0]!.turns[1]!.expect as { toolCalls: Array<{ arguments: unknown }> }).toolCalls[0]!.arguments = { type: 'object', properties: { a: { pattern: '(?<=x)y' } } };
    const response = await server.api(`/v1/agents/${agentId}/tests`, { method: 'POST', body: bad });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('invalid_test_suite');
    expect(response.body.problems[0].path).toMatch(/^scenarios\.0\.turns\.1\.expect\.toolCalls\.0\.arguments/);
    const shapeless = await server.api(`/v1/agents/${agentId}/tests`, { method: 'POST', body: { name: 'x', scenarios: [{ name: 'y', turns: [{ expect: {} }] }] } });
    expect(shapeless.status).toBe(400);
  });

  it('runs a suite through the simulated caller: one scenario passes, one fails, and the results say why', async () => {
    const stored = await server.api(`/v1/agents/${agentId}/tests`, { method: 'POST', body: SUITE });
    expect(stored.status).toBe(201);
    expect(stored.body).toMatchObject({ name: 'front desk', scenarioCount: 2, turnCount: 4 });
    expectHeard('What time do you open?', 'I would like to talk to a person.', 'What time do you open?', 'Thanks, goodbye.');

    const started = await server.api(`/v1/agents/${agentId}/tests/run`, { method: 'POST', body: { suiteId: stored.body.id } });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ status: 'running', scenarioCount: 2, results: [] });
    const run = await eventually(() => server.api(`/v1/agents/${agentId}/tests/runs/${started.body.id}`), (response) => response.body.status !== 'running', 150_000);

    expect(run.body.status).toBe('failed');
    expect(run.body).toMatchObject({ passed: 1, failed: 1, error: null });
    const [passing, failing] = run.body.results;
    expect(passing).toMatchObject({ scenario: 'hours, then a person', passed: true, endReason: 'transferred', error: null });
    expect(passing.turns.map((turn: { failures: string[] }) => turn.failures)).toEqual([[], []]);
    expect(passing.turns[0]).toMatchObject({ said: 'What time do you open?', heard: 'What time do you open?', reply: 'We open at nine in the morning.' });
    expect(passing.turns[1].toolCalls).toEqual([{ name: 'transfer_call', arguments: { destination: TRANSFER_TO }, error: null }]);

    expect(failing).toMatchObject({ scenario: 'expects what the agent does not do', passed: false, error: null });
    expect(failing.turns[0].failures).toEqual(['reply does not include "ten" (reply: "We open at nine in the morning.")']);
    expect(failing.turns[1].reply).toBe('Have a nice day!');
    expect(failing.turns[1].failures).toEqual(['the agent did not end the call (it ended as stream_stopped)']);
    // The transcript is stored with the result.
    expect(failing.transcript.map((turn: { role: string; text: string }) => [turn.role, turn.text])).toEqual([
      ['user', 'What time do you open?'],
      ['assistant', 'We open at nine in the morning.'],
      ['user', 'Thanks, goodbye.'],
      ['assistant', 'Have a nice day!'],
    ]);

    // Each scenario was a web call like any other, tied to its run.
    const call = await server.api(`/v1/calls/${passing.callId}`);
    expect(call.body).toMatchObject({ direction: 'web', testRunId: started.body.id, endReason: 'transferred' });
    expect(call.body.events.map((event: { type: string }) => event.type)).toContain('call_transferred');

    const runs = await server.api(`/v1/agents/${agentId}/tests/runs`);
    expect(runs.body.data[0]).toMatchObject({ id: started.body.id, status: 'failed', passed: 1, failed: 1 });

    // Every answer of the tests API is as documented.
    const contract = openApiContract(await (await fetch(`${server.serverUrl}/docs/openapi.json`)).json());
    const base = '/v1/agents/{id}/tests';
    contract.assertResponse('POST', base, stored.status, stored.body);
    contract.assertResponse('POST', `${base}/run`, started.status, started.body);
    contract.assertResponse('GET', `${base}/runs/{runId}`, run.status, run.body);
    contract.assertResponse('GET', `${base}/runs`, runs.status, runs.body);
    const list = await server.api(`/v1/agents/${agentId}/tests`);
    contract.assertResponse('GET', base, list.status, list.body);
    const detail = await server.api(`/v1/agents/${agentId}/tests/${stored.body.id}`);
    expect(detail.body.definition.scenarios).toHaveLength(2);
    contract.assertResponse('GET', `${base}/{suiteId}`, detail.status, detail.body);
    const missing = await server.api(`/v1/agents/${agentId}/tests/runs/00000000-0000-4000-8000-000000000000`);
    expect(missing.status).toBe(404);
    contract.assertResponse('GET', `${base}/runs/{runId}`, missing.status, missing.body);
  });

  it('keeps suites and runs to their organization, and a read key may read but not run', async () => {
    const stored = await server.api(`/v1/agents/${agentId}/tests`, { method: 'POST', body: { ...SUITE, name: 'scoped' } });
    const reader = await server.api('/v1/api-keys', { method: 'POST', body: { name: 'tests reader', scopes: ['read'] } });
    const readKey = reader.body.key as string;
    expect((await server.api(`/v1/agents/${agentId}/tests`, { apiKey: readKey })).status).toBe(200);
    expect((await server.api(`/v1/agents/${agentId}/tests/run`, { method: 'POST', body: { suiteId: stored.body.id }, apiKey: readKey })).status).toBe(403);
    expect((await server.api(`/v1/agents/${agentId}/tests`, { method: 'POST', body: SUITE, apiKey: readKey })).status).toBe(403);

    const prisma = createTestPrisma(1);
    const other = await createOtherOrganizationKey(createRepositories(prisma), 'scenario tests other org').finally(() => prisma.$disconnect());
    expect((await server.api(`/v1/agents/${agentId}/tests`, { apiKey: other })).status).toBe(404);
    expect((await server.api(`/v1/agents/${agentId}/tests/${stored.body.id}`, { apiKey: other })).status).toBe(404);
    expect((await server.api(`/v1/agents/${agentId}/tests/run`, { method: 'POST', body: { suiteId: stored.body.id }, apiKey: other })).status).toBe(404);
    // At most three runs going at once per organization (each holds a call and its audio).
    const tests = server.app.get(AgentTestRepository);
    const organizationId = organizationIdOf(await server.api('/v1/api-keys/current'));
    const suite = (await tests.findSuite(organizationId, agentId, stored.body.id))!;
    const going = await Promise.all([1, 2, 3].map(() => tests.startRun({ organizationId, agentId, suite, agentConfigVersion: 1, scenarioCount: 2, deadlineAt: new Date(Date.now() + 60_000) })));
    const refused = await server.api(`/v1/agents/${agentId}/tests/run`, { method: 'POST', body: { suiteId: stored.body.id } });
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('test_runs_limit');
    for (const run of going) await tests.finishRun(run.id, { status: 'error', results: [], error: 'test' });

    expect((await server.api(`/v1/agents/${agentId}/tests/${stored.body.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await server.api(`/v1/agents/${agentId}/tests/${stored.body.id}`)).status).toBe(404);
  });

  it('the CLI stores and runs a suite file, prints a report, and exits 1 on a failure and 0 when all pass', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scenario-suite-'));
    const failingFile = join(dir, 'suite.json');
    writeFileSync(failingFile, JSON.stringify({ ...SUITE, scenarios: [SUITE.scenarios[1]] }));
    const passingFile = join(dir, 'passing.json');
    writeFileSync(passingFile, JSON.stringify({ ...SUITE, name: 'front desk (passing)', scenarios: [SUITE.scenarios[0]] }));

    expectHeard('What time do you open?', 'Thanks, goodbye.');
    const failed = await runCli(['test', agentId, failingFile]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain('FAIL  expects what the agent does not do');
    expect(failed.stdout).toContain('reply does not include "ten"');
    expect(failed.stdout).toContain('0 of 1 scenarios passed');

    expectHeard('What time do you open?', 'I would like to talk to a person.');
    const passed = await runCli(['test', agentId, passingFile]);
    expect(passed.stdout).toContain('PASS  hours, then a person');
    expect(passed.code).toBe(0);
  });

  function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'apps/cli/src/agents.command.ts', ...args],
        { cwd: join(__dirname, '..', '..'), env: { ...process.env, SWITCHBOARD_URL: server.serverUrl, SWITCHBOARD_API_KEY: server.adminApiKey }, timeout: 120_000 },
        (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  }
});
