import { performance } from 'node:perf_hooks';
import { sineTone } from '@switchboard/audio';
import { ArgumentValidator } from '@switchboard/conversation';
import { FakeBusinessEndpoint, type FakeChatReply, FakeOpenAiServer, type RecordedRequest } from '@switchboard/testing';
import { bindAgent, dialAgent, speechFixture } from '../support/conversation-agents';
import { storeSecret, storeSigningSecret } from '../support/secrets';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

/**
 * A tenant's tool schema cannot freeze the process. `"pattern": "^(a|a)*$"` checked by a backtracking
 * engine against 40 `a`s and a `!` takes 2^40 steps: every call of every tenant would stall. Patterns
 * run on RE2 (linear time), so the argument is refused in microseconds and /health keeps answering
 * while the model sends it. Schemas that cannot be compiled are refused when saved, with the path.
 */

/**
 * The fastest of a few batches of `work`, in ms per run: the least the work itself costs on this
 * machine, with garbage collections and other processes' turns on the CPU left out (a batch, so
 * that microseconds of work are well above the clock's resolution).
 */
function leastTimeMs(work: () => unknown, batches = 20, runsPerBatch = 50): number {
  let least = Infinity;
  for (let batch = 0; batch < batches; batch++) {
    const started = performance.now();
    for (let run = 0; run < runsPerBatch; run++) work();
    least = Math.min(least, (performance.now() - started) / runsPerBatch);
  }
  return least;
}

const ENGINE_KEY = 'sk-tool-schema-e2e';
const PATHOLOGICAL_PATTERN = '^(a|a)*$';

function speechFor(text: string): Int16Array {
  return sineTone({ frequencyHz: 440, sampleRate: 24_000, durationMs: Math.max(200, text.length * 30), amplitudeDbfs: -12 });
}

describe('Tool schemas cannot freeze the process (e2e)', () => {
  let server: TestServer;
  let openai: FakeOpenAiServer;
  let business: FakeBusinessEndpoint;
  let chat: (request: RecordedRequest) => FakeChatReply = () => ({ text: ['Hello.'] });

  beforeAll(async () => {
    openai = await FakeOpenAiServer.start({
      apiKey: ENGINE_KEY,
      transcription: () => ({ text: 'Check code a a a.' }),
      chat: (request) => chat(request),
      speech: (request) => ({ pcm: speechFor(String((request.json as { input: string }).input)) }),
    });
    business = await FakeBusinessEndpoint.start();
    server = await startTestServer();
    await storeSecret(server, 'tool-schema-engine-key', ENGINE_KEY);
    await storeSigningSecret(server, 'tool-schema-signing');
  }, 30_000);

  afterAll(async () => {
    await server?.close();
    await Promise.all([openai?.close(), business?.close()]);
  });

  const engine = { provider: 'openai', baseUrl: '', apiKeySecret: 'tool-schema-engine-key' };
  const engines = () => ({
    stt: { ...engine, baseUrl: openai.baseUrl, model: 'whisper-1' },
    llm: { ...engine, baseUrl: openai.baseUrl, model: 'gpt-test' },
    tts: { ...engine, baseUrl: openai.baseUrl, model: 'tts-test', voice: 'alloy' },
  });
  const toolWith = (parameters: unknown) => ({ type: 'webhook', name: 'check_code', description: 'Checks a code.', url: business.url('/check'), signingSecret: 'tool-schema-signing', parameters });

  it.each([
    ['a backreference (no linear-time engine runs it)', { type: 'object', properties: { code: { type: 'string', pattern: '(a)\\1' } } }, 'tools.0.parameters.properties.code.pattern'],
    ['a root that is not an object schema', { type: 'string' }, 'tools.0.parameters'],
    ['a keyword with a value of the wrong type', { type: 'object', properties: { code: { type: 'string', minLength: 'x' } } }, 'tools.0.parameters.properties.code.minLength'],
    ['a reference to a remote schema', { type: 'object', properties: { code: { $ref: 'https://schemas.example.com/code.json' } } }, 'tools.0.parameters.properties.code.$ref'],
  ])('refuses %s at save, with the path', async (_label, parameters, path) => {
    const response = await server.api('/v1/agents', { method: 'POST', body: { name: 'bad schema', engine: 'pipeline', config: { ...engines(), tools: [toolWith(parameters)] } } });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('invalid_agent_config');
    expect(response.body.problems.map((problem: { path: string }) => problem.path)).toContain(path);
  });

  it('runs the catastrophic pattern in linear time: /health keeps answering while the model sends the pathological argument', async () => {
    const saved = await server.api('/v1/agents', {
      method: 'POST',
      body: { name: 'catastrophic', engine: 'pipeline', config: { ...engines(), tools: [toolWith({ type: 'object', properties: { code: { type: 'string', pattern: PATHOLOGICAL_PATTERN } }, required: ['code'] })] } },
    });
    // RE2 compiles it (it is a fine pattern for a linear-time engine), so the config is accepted.
    expect(saved.status).toBe(201);
    const { number } = await bindAgent(server, { engine: 'pipeline', config: saved.body.config });

    const healthTimesMs: number[] = [];
    let probing: Promise<void> | undefined;
    const probeHealth = async () => {
      // While the server receives the argument and validates it, /health must keep answering.
      const until = performance.now() + 1_000;
      while (performance.now() < until) {
        const started = performance.now();
        const response = await fetch(`${server.serverUrl}/health`);
        await response.text();
        healthTimesMs.push(performance.now() - started);
      }
    };
    chat = (request) => {
      if ((request.json as { messages: { role: string }[] }).messages.some((message) => message.role === 'tool')) return { text: ['That code is not valid.'] };
      probing = probeHealth();
      return { toolCalls: [{ id: 'call_pathological', name: 'check_code', arguments: JSON.stringify({ code: `${'a'.repeat(40)}!` }) }] };
    };
    // The validator the call really uses, and what it was given.
    const validations = jest.spyOn(ArgumentValidator.prototype, 'problems');
    const { call, callId } = await dialAgent(server, number);
    await call.streamAudio(speechFixture('hours'), { trailingSilenceMs: 200 });
    const detail = await eventually(async () => (await server.api(`/v1/calls/${callId}`)).body, (body) => body.toolInvocations?.length === 1, 20_000);
    await probing;
    await call.hangup();

    expect(detail.toolInvocations[0]).toMatchObject({
      name: 'check_code',
      result: null,
      error: expect.stringMatching(/^arguments do not match the tool's parameters: \/code: must match pattern/),
    });
    expect(business.received).toEqual([]);
    expect(healthTimesMs.length).toBeGreaterThan(5);
    process.stdout.write(`/health during the pathological argument: ${healthTimesMs.length} requests, slowest ${Math.max(...healthTimesMs).toFixed(1)} ms\n`);

    // Linear time, judged against this machine rather than a budget in ms: the pathological argument
    // costs the call's own validator about what an argument of the same length that matches costs.
    // On a backtracking engine the first takes 2^40 steps and the second 41, so even 2^20 steps
    // would be thousands of times the benign cost; on RE2 both are one pass over 41 characters.
    const pathological = validations.mock.calls.find(([value]) => (value as { code?: unknown }).code === `${'a'.repeat(40)}!`);
    expect(pathological).toBeDefined();
    const validator = validations.mock.instances[validations.mock.calls.indexOf(pathological!)] as unknown as ArgumentValidator;
    validations.mockRestore();
    const benign = { code: 'a'.repeat(41) };
    expect(validator.problems(benign)).toBeUndefined();
    const pathologicalMs = leastTimeMs(() => validator.problems(pathological![0]));
    const benignMs = leastTimeMs(() => validator.problems(benign));
    process.stdout.write(`validating the pathological argument: ${(pathologicalMs * 1000).toFixed(1)} us; a matching one: ${(benignMs * 1000).toFixed(1)} us\n`);
    expect(pathologicalMs).toBeLessThan(100 * benignMs);
  }, 40_000);
});
