import { Writable } from 'node:stream';
import { sineTone } from '@switchboard/audio';
import { FakeBusinessEndpoint, type FakeChatReply, FakeOpenAiServer, type RecordedRequest } from '@switchboard/testing';
import { bindAgent, callTo, dialAgent, speechFixture } from '../support/conversation-agents';
import { AGENT_NOT_READY_MESSAGE } from '../../apps/server/src/agents-api/agent-not-ready';
import { createOtherOrganizationKey, createRepositories, createTestPrisma } from '../support/database';
import { storeSecret, storeSigningSecret } from '../support/secrets';
import { toolSignatureIsValid } from '../support/tool-signature';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

/**
 * Keys stay with their owner, tried as a tenant would: the operator's OPENAI_API_KEY is never sent
 * to a URL a tenant chose (refused at save; stored anyway, refused at call start and the tenant's
 * server sees nothing), one organization cannot use another's secret by guessing its name, and no
 * secret value ever comes back out: not in an API response, a log line or a call event.
 */

const OPERATOR_KEY = 'sk-operator-key-that-must-never-reach-a-tenant-0123456789';
/** Distinctive values to search every output for. */
const TENANT_ENGINE_KEY = 'sk-tenant-engine-key-LEAKCHECK-4f7a9c';
const OTHER_ORG_VALUE = 'sk-other-organization-value-LEAKCHECK-8b2e1d';

function speechFor(text: string): Int16Array {
  return sineTone({ frequencyHz: 440, sampleRate: 24_000, durationMs: Math.max(200, text.length * 30), amplitudeDbfs: -12 });
}

describe('Secrets and operator keys stay with their owner (e2e)', () => {
  let server: TestServer;
  /** A server the tenant controls: it records every request (and every header) it receives. */
  let tenantServer: FakeOpenAiServer;
  let openai: FakeOpenAiServer;
  let business: FakeBusinessEndpoint;
  const prisma = createTestPrisma(2);
  const logLines: string[] = [];
  const responses: string[] = [];
  let chat: (request: RecordedRequest) => FakeChatReply = () => ({ text: ['Hello.'] });
  let previousOperatorKey: string | undefined;

  beforeAll(async () => {
    previousOperatorKey = process.env['OPENAI_API_KEY'];
    process.env['OPENAI_API_KEY'] = OPERATOR_KEY;
    tenantServer = await FakeOpenAiServer.start();
    openai = await FakeOpenAiServer.start({
      apiKey: TENANT_ENGINE_KEY,
      transcription: () => ({ text: 'Where is my order four five six seven?' }),
      chat: (request) => chat(request),
      speech: (request) => ({ pcm: speechFor(String((request.json as { input: string }).input)) }),
    });
    business = await FakeBusinessEndpoint.start();
    business.reply = () => ({ status: 200, body: '{"status":"shipped"}', contentType: 'application/json' });
    const logDestination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString('utf8'));
        done();
      },
    });
    server = await startTestServer({ LOG_LEVEL: 'trace' }, { logDestination });
  }, 30_000);

  afterAll(async () => {
    await server?.close();
    await Promise.all([tenantServer?.close(), openai?.close(), business?.close()]);
    await prisma.$disconnect();
    if (previousOperatorKey === undefined) delete process.env['OPENAI_API_KEY'];
    else process.env['OPENAI_API_KEY'] = previousOperatorKey;
  });

  /** Every API answer is kept, to be searched for secret values at the end. */
  async function api(path: string, init: Parameters<TestServer['api']>[1] = {}) {
    const response = await server.api(path, init);
    responses.push(JSON.stringify(response.body ?? null));
    return response;
  }
  const detailOf = async (callId: string) => (await api(`/v1/calls/${callId}`)).body;
  const tenantSawOperatorKey = () => tenantServer.requests.some((request) => JSON.stringify(request.headers).includes(OPERATOR_KEY));

  describe('the secrets API', () => {
    it('stores values it never shows again: name, last 4 characters, version and times only', async () => {
      const value = 'sk-live-abcdefghijklmnopqrstuvwxyz-WXYZ';
      const created = await api('/v1/secrets', { method: 'POST', body: { name: 'api-shape', value } });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ name: 'api-shape', hint: 'WXYZ', version: 1, createdAt: expect.any(String), updatedAt: expect.any(String) });
      expect(JSON.stringify(created.body)).not.toContain(value);

      const replaced = await api('/v1/secrets/api-shape', { method: 'PUT', body: { value: 'short' } });
      expect(replaced.body).toMatchObject({ name: 'api-shape', hint: '', version: 2 });
      const listed = await api('/v1/secrets');
      expect(listed.body.data.find((secret: { name: string }) => secret.name === 'api-shape')).toMatchObject({ hint: '', version: 2 });

      expect((await api('/v1/secrets', { method: 'POST', body: { name: 'api-shape', value: 'again' } })).status).toBe(409);
      expect((await api('/v1/secrets', { method: 'POST', body: { name: 'has space', value: 'x' } })).status).toBe(400);
      expect((await api('/v1/secrets', { method: 'POST', body: { name: 'empty-value', value: '' } })).status).toBe(400);
      expect((await api('/v1/secrets/api-shape', { method: 'DELETE' })).status).toBe(204);
      expect((await api('/v1/secrets/api-shape', { method: 'PUT', body: { value: 'x' } })).status).toBe(404);
    });

    it('keeps organizations apart: another organization neither lists nor replaces a name it does not own', async () => {
      await storeSecret(server, 'org-scoped', 'value-of-the-default-organization');
      const otherKey = await createOtherOrganizationKey(createRepositories(prisma), 'secrets');
      const listed = await api('/v1/secrets', { apiKey: otherKey });
      expect(listed.body.data).toEqual([]);
      expect((await api('/v1/secrets/org-scoped', { apiKey: otherKey, method: 'PUT', body: { value: 'hijack' } })).status).toBe(404);
      expect((await api('/v1/secrets/org-scoped', { apiKey: otherKey, method: 'DELETE' })).status).toBe(404);
    });
  });

  it('a replaced secret is used by the next call, with no new config version', async () => {
    await storeSecret(server, 'rotating-key', 'sk-rotating-first-value');
    const engine = { provider: 'openai', model: 'm', baseUrl: tenantServer.baseUrl, apiKeySecret: 'rotating-key' };
    const created = await api('/v1/agents', { method: 'POST', body: { name: 'rotates', engine: 'pipeline', config: { stt: engine, llm: engine } } });
    expect(created.status).toBe(201);
    const { number } = await bindAgent(server, { engine: 'pipeline', config: created.body.config });
    const keysSeen = async () => {
      const before = tenantServer.requests.length;
      const { call } = await dialAgent(server, number);
      await call.streamAudio(speechFixture('hours'), { trailingSilenceMs: 200 });
      await eventually(async () => tenantServer.requests.length, (count) => count > before, 15_000);
      await call.hangup();
      return new Set(tenantServer.requests.slice(before).map((request) => request.headers.authorization));
    };
    expect(await keysSeen()).toEqual(new Set(['Bearer sk-rotating-first-value']));
    expect((await api('/v1/secrets/rotating-key', { method: 'PUT', body: { value: 'sk-rotating-second-value' } })).body.version).toBe(2);
    expect(await keysSeen()).toEqual(new Set(['Bearer sk-rotating-second-value']));
    expect((await api(`/v1/agents/${created.body.id}`)).body.version).toBe(1);
    tenantServer.requests.length = 0;
  }, 60_000);

  /** Dials `number`: its agent is not ready, so the call is declined in words and stored; returns its id. */
  async function refusedAsNotReady(number: string): Promise<string> {
    const call = callTo(server, number);
    const twiml = await call.dial();
    expect(twiml).toMatchObject({ stream: null, rejected: true, sayText: AGENT_NOT_READY_MESSAGE });
    const stored = await prisma.call.findFirst({ where: { twilioCallSid: call.parties.callSid }, select: { id: true } });
    if (!stored) throw new Error('the refused call was not stored');
    return stored.id;
  }

  describe("the operator's key (apiKeyEnv) never reaches a tenant's URL", () => {
    it.each([
      ['stt', { stt: { provider: 'openai', apiKeyEnv: 'OPENAI_API_KEY', baseUrl: 'TENANT' } }],
      ['llm', { llm: { provider: 'openai', apiKeyEnv: 'OPENAI_API_KEY', baseUrl: 'TENANT' } }],
      ['tts', { tts: { provider: 'openai', apiKeyEnv: 'OPENAI_API_KEY', baseUrl: 'TENANT' } }],
    ])('refuses %s paired with a baseUrl of the tenant\'s, at save', async (engine, config) => {
      const body = JSON.parse(JSON.stringify(config).replace('TENANT', tenantServer.baseUrl));
      const response = await api('/v1/agents', { method: 'POST', body: { name: 'steal', engine: 'pipeline', config: body } });
      expect(response.status).toBe(400);
      expect(response.body.problems).toEqual([{ path: `${engine}.apiKeyEnv`, message: expect.stringMatching(/only sent to the provider's own endpoint/) }]);
    });

    it('refuses it for a realtime url of the tenant\'s, at save', async () => {
      const response = await api('/v1/agents', { method: 'POST', body: { name: 'steal-rt', engine: 'realtime', config: { realtime: { apiKeyEnv: 'OPENAI_API_KEY', url: tenantServer.baseUrl.replace('http', 'ws') } } } });
      expect(response.status).toBe(400);
      expect(response.body.problems).toEqual([{ path: 'realtime.apiKeyEnv', message: expect.stringMatching(/only sent to the provider's own endpoint/) }]);
    });

    it('stored anyway (straight into the database), refuses the call before it is answered: the call record says why and the tenant\'s server sees no request', async () => {
      const steal = { provider: 'openai', model: 'm', baseUrl: tenantServer.baseUrl, apiKeyEnv: 'OPENAI_API_KEY' };
      const { number } = await bindAgent(server, { engine: 'pipeline', config: { stt: steal, llm: steal, tts: { ...steal, voice: 'alloy' } } });
      const callId = await refusedAsNotReady(number);
      expect((await detailOf(callId)).endReason).toBe('agent_not_ready');
      expect(tenantServer.requests).toEqual([]);
      expect(tenantSawOperatorKey()).toBe(false);
    }, 30_000);
  });

  describe("another organization's secret", () => {
    it('is not found by name: the agent is saved not ready, naming the path', async () => {
      const otherKey = await createOtherOrganizationKey(createRepositories(prisma), 'secret-owner');
      expect((await api('/v1/secrets', { apiKey: otherKey, method: 'POST', body: { name: 'their-key', value: OTHER_ORG_VALUE } })).status).toBe(201);
      const response = await api('/v1/agents', {
        method: 'POST',
        body: { name: 'borrow', engine: 'pipeline', config: { llm: { provider: 'openai', baseUrl: tenantServer.baseUrl, apiKeySecret: 'their-key' } } },
      });
      expect(response.status).toBe(201);
      expect(response.body.readiness.problems).toContainEqual({ path: 'llm.apiKeySecret', message: 'no secret named "their-key" in this organization; create it with POST /v1/secrets' });
    });

    it('is never opened for a call of another organization: the call is refused before it is answered and no request carries it', async () => {
      const stolen = { provider: 'openai', model: 'm', baseUrl: tenantServer.baseUrl, apiKeySecret: 'their-key' };
      const { number } = await bindAgent(server, { engine: 'pipeline', config: { stt: stolen, llm: stolen } });
      const callId = await refusedAsNotReady(number);
      expect((await detailOf(callId)).endReason).toBe('agent_not_ready');
      expect(tenantServer.requests.some((request) => JSON.stringify(request.headers).includes(OTHER_ORG_VALUE))).toBe(false);
    }, 30_000);
  });

  it('no secret value appears in any API response, log line or call event, while the engines and the business do get them', async () => {
    await storeSecret(server, 'leak-engine-key', TENANT_ENGINE_KEY);
    const signing = await storeSigningSecret(server, 'leak-signing');
    chat = (request) =>
      (request.json as { messages: { role: string }[] }).messages.some((message) => message.role === 'tool')
        ? { text: ['It has shipped.'] }
        : { toolCalls: [{ id: 'call_status', name: 'order_status', arguments: '{"orderId":"4567"}' }] };
    const engine = { provider: 'openai', baseUrl: openai.baseUrl, apiKeySecret: 'leak-engine-key' };
    const created = await api('/v1/agents', {
      method: 'POST',
      body: {
        name: 'uses secrets',
        engine: 'pipeline',
        config: {
          stt: { ...engine, model: 'whisper-1' },
          llm: { ...engine, model: 'gpt-test' },
          tts: { ...engine, model: 'tts-test', voice: 'alloy' },
          tools: [{ type: 'webhook', name: 'order_status', description: 'Order status.', url: business.url('/status'), signingSecret: 'leak-signing' }],
        },
      },
    });
    expect(created.status).toBe(201);
    const { number } = await bindAgent(server, { engine: 'pipeline', config: created.body.config });
    const businessBefore = business.received.length;
    const { call, callId } = await dialAgent(server, number);
    await call.streamAudio(speechFixture('order-status'), { trailingSilenceMs: 200 });
    const detail = await eventually(() => detailOf(callId), (body) => body.transcript?.some((turn: { text: string }) => turn.text === 'It has shipped.'), 20_000);
    await call.hangup();
    await api(`/v1/agents/${created.body.id}`);
    await api('/v1/secrets');

    // The secrets did their work: the engines got the key, the business a valid signature.
    expect(openai.requests.every((request) => request.headers.authorization === `Bearer ${TENANT_ENGINE_KEY}`)).toBe(true);
    const toolRequest = business.received[businessBefore]!;
    expect(toolSignatureIsValid(signing, toolRequest.headers, toolRequest.bodyText)).toBe(true);
    // ...and never came back out.
    const signingKey = signing.slice('whsec_'.length);
    const outputs = { responses: responses.join('\n'), logs: logLines.join(''), events: JSON.stringify(detail.events) };
    expect(logLines.length).toBeGreaterThan(20);
    for (const [where, text] of Object.entries(outputs)) {
      for (const value of [TENANT_ENGINE_KEY, signing, signingKey, OTHER_ORG_VALUE, OPERATOR_KEY]) {
        if (text.includes(value)) throw new Error(`a secret value appears in the ${where}`);
      }
    }
  }, 40_000);
});
