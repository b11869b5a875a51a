import { sineTone } from '@switchboard/audio';
import { FakeBusinessEndpoint, type FakeChatReply, FakeOpenAiServer, type RecordedRequest } from '@switchboard/testing';
import { WebhookSubscriptionRepository } from '@switchboard/persistence';
import { AGENT_NOT_READY_MESSAGE } from '../../apps/server/src/agents-api/agent-not-ready';
import { bindAgent, callTo, dialAgent, speechFixture } from '../support/conversation-agents';
import { createScratchDatabase, type ScratchDatabase } from '../support/database';
import { storeSecret, storeSigningSecret } from '../support/secrets';
import { eventually, startTestServer, type TestServer } from '../support/test-server';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * Server-side request forgery, tried as a tenant would. The operator allows one private address
 * (OUTBOUND_ALLOWED_HOSTS=127.0.0.2, where the engines, business endpoints and webhook receivers a
 * tenant legitimately uses listen here); an "internal service" listens on 127.0.0.1 and must never
 * see a request. Every kind of tenant-directed URL (webhook subscription, tool, engine baseUrl,
 * realtime url) pointed at 127.0.0.1, 10.0.0.1 or 169.254.169.254 is refused when saved; written
 * straight into the database instead, it is refused when the call makes the request; and an allowed
 * server's redirect to the internal service is never followed.
 */

const ALLOWED_HOST = '127.0.0.2';
const ENGINE_KEY = 'sk-tenant-engine-key-for-the-guard-e2e';

function speechFor(text: string): Int16Array {
  return sineTone({ frequencyHz: 440, sampleRate: 24_000, durationMs: Math.max(200, text.length * 30), amplitudeDbfs: -12 });
}

function hasToolMessage(request: RecordedRequest): boolean {
  return (request.json as { messages: { role: string }[] }).messages.some((message) => message.role === 'tool');
}

describe('Outbound guard: tenant URLs never reach private addresses (e2e)', () => {
  let server: TestServer;
  let database: ScratchDatabase;
  /** The internal service an attacker wants to reach; any request it records is a failed test. */
  let internal: FakeBusinessEndpoint;
  /** An allowed server that answers every request with a redirect to the internal service. */
  let redirector: FakeBusinessEndpoint;
  let openai: FakeOpenAiServer;
  const receiver = new WebhookReceiver(ALLOWED_HOST);
  let chat: (request: RecordedRequest) => FakeChatReply = () => ({ text: ['Hello.'] });

  beforeAll(async () => {
    internal = await FakeBusinessEndpoint.start('127.0.0.1');
    internal.reply = () => ({ status: 200, body: '{"secret":"internal data"}', contentType: 'application/json' });
    redirector = await FakeBusinessEndpoint.start(ALLOWED_HOST);
    redirector.reply = () => ({ status: 302, body: '', headers: { location: internal.url('/redirected') } });
    openai = await FakeOpenAiServer.start({
      host: ALLOWED_HOST,
      apiKey: ENGINE_KEY,
      transcription: () => ({ text: 'Where is my order?' }),
      chat: (request) => chat(request),
      speech: (request) => ({ pcm: speechFor(String((request.json as { input: string }).input)) }),
    });
    await receiver.start();
    // A database of its own: the delivery worker claims due deliveries of every organization.
    database = await createScratchDatabase('outbound_guard');
    server = await startTestServer({
      DATABASE_URL: database.url,
      MIGRATE_ON_START: 'true',
      OUTBOUND_ALLOWED_HOSTS: ALLOWED_HOST,
      WEBHOOK_WORKER_ENABLED: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '25',
      WEBHOOK_RETRY_BASE_MS: '60000',
      WEBHOOK_TIMEOUT_MS: '2000',
    });
    await storeSecret(server, 'engine-key', ENGINE_KEY);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await Promise.all([internal?.close(), redirector?.close(), openai?.close(), receiver.stop()]);
    await database?.drop();
  });

  afterEach(() => {
    // Whatever a test did, the internal service heard nothing.
    expect(internal.received).toEqual([]);
  });

  const engines = (overrides: Record<string, unknown> = {}) => ({
    stt: { provider: 'openai', model: 'whisper-1', baseUrl: openai.baseUrl, apiKeySecret: 'engine-key' },
    llm: { provider: 'openai', model: 'gpt-test', baseUrl: openai.baseUrl, apiKeySecret: 'engine-key' },
    tts: { provider: 'openai', model: 'tts-test', baseUrl: openai.baseUrl, apiKeySecret: 'engine-key', voice: 'alloy' },
    ...overrides,
  });

  const blocked = [
    { label: '127.0.0.1 (loopback)', host: () => `127.0.0.1:${new URL(internal.url()).port}`, reason: /127\.0\.0\.1 is a loopback address/ },
    { label: '10.0.0.1 (private)', host: () => '10.0.0.1', reason: /10\.0\.0\.1 is a private address/ },
    { label: '169.254.169.254 (cloud metadata)', host: () => '169.254.169.254', reason: /169\.254\.169\.254 is a link-local address/ },
  ];

  describe.each(blocked)('refused when saved: $label', ({ host, reason }) => {
    it('a webhook subscription url', async () => {
      const before = await server.api('/v1/webhook-subscriptions');
      const response = await server.api('/v1/webhook-subscriptions', { method: 'POST', body: { url: `http://${host()}/hooks`, events: ['call.started'] } });
      expect(response.status).toBe(400);
      expect(response.body.details).toEqual([{ path: 'url', message: expect.stringMatching(reason) }]);
      expect((await server.api('/v1/webhook-subscriptions')).body).toEqual(before.body);
    });

    it('a tool url, every engine baseUrl and the realtime url, each named at its path', async () => {
      const signing = await storeSigningSecret(server, 'guard-signing');
      expect(signing).toMatch(/^whsec_/);
      const pipeline = await server.api('/v1/agents', {
        method: 'POST',
        body: {
          name: 'ssrf',
          engine: 'pipeline',
          config: {
            stt: { provider: 'openai', baseUrl: `http://${host()}/v1` },
            llm: { provider: 'openai', baseUrl: `http://${host()}/v1` },
            tts: { provider: 'openai', baseUrl: `http://${host()}/v1` },
            tools: [{ type: 'webhook', name: 'lookup', description: 'd', url: `http://${host()}/tool`, signingSecret: 'guard-signing' }],
          },
        },
      });
      expect(pipeline.status).toBe(400);
      expect(pipeline.body.code).toBe('invalid_agent_config');
      const problems = pipeline.body.problems as { path: string; message: string }[];
      expect(problems.map((problem) => problem.path).sort()).toEqual(['llm.baseUrl', 'stt.baseUrl', 'tools.0.url', 'tts.baseUrl']);
      for (const problem of problems) expect(problem.message).toMatch(reason);

      const realtime = await server.api('/v1/agents', { method: 'POST', body: { name: 'ssrf-rt', engine: 'realtime', config: { realtime: { url: `ws://${host()}/v1/realtime`, apiKeySecret: 'engine-key' } } } });
      expect(realtime.status).toBe(400);
      expect(realtime.body.problems).toEqual([{ path: 'realtime.url', message: expect.stringMatching(reason) }]);
      const agents = await server.api('/v1/agents');
      expect(agents.body.data.filter((agent: { name: string }) => agent.name.startsWith('ssrf'))).toEqual([]);
    });
  });

  it('lists every problem of a config at once: its shape, its URLs and its tool schemas (secrets not stored yet make it not ready, not invalid)', async () => {
    const response = await server.api('/v1/agents', {
      method: 'POST',
      body: {
        name: 'all wrong',
        engine: 'pipeline',
        config: {
          turn: { threshold: 7 },
          llm: { provider: 'openai', baseUrl: 'http://169.254.169.254/v1', apiKeySecret: 'not-stored' },
          tools: [{ type: 'webhook', name: 'lookup', description: 'd', url: 'http://10.0.0.1/tool', signingSecret: 'also-not-stored', parameters: { type: 'string' } }],
        },
      },
    });
    expect(response.status).toBe(400);
    expect(response.body.problems.map((problem: { path: string }) => problem.path).sort()).toEqual(
      ['llm.baseUrl', 'tools.0.parameters', 'tools.0.url', 'turn.threshold'].sort(),
    );
  });

  describe('refused when the call makes the request (configs written straight into the database)', () => {
    const detailOf = async (callId: string) => (await server.api(`/v1/calls/${callId}`)).body;

    /** The agent reads not ready for `path`'s URL, and a call to its number is declined before it is answered. */
    async function declinedAsNotReady(agentId: string, number: string, path: string, reason: RegExp): Promise<void> {
      const readiness = (await server.api(`/v1/agents/${agentId}`)).body.readiness;
      expect(readiness.problems).toContainEqual({ path, message: expect.stringMatching(reason) });
      expect(await callTo(server, number).dial()).toMatchObject({ stream: null, rejected: true, sayText: AGENT_NOT_READY_MESSAGE });
    }

    it.each(blocked)('an engine baseUrl on $label: the call is declined before it is answered, and the agent says why', async ({ host, reason }) => {
      const { agentId, number } = await bindAgent(server, { engine: 'pipeline', config: engines({ llm: { provider: 'openai', model: 'gpt-test', baseUrl: `http://${host()}/v1`, apiKeySecret: 'engine-key' } }) });
      await declinedAsNotReady(agentId, number, 'llm.baseUrl', reason);
    }, 30_000);

    it('an engine whose allowed server redirects to 127.0.0.1: the redirect is not followed (nor the key sent there)', async () => {
      chat = () => ({ text: ['Hello.'] });
      const { number } = await bindAgent(server, { engine: 'pipeline', config: engines({ stt: { provider: 'openai', model: 'whisper-1', baseUrl: redirector.url('/v1'), apiKeySecret: 'engine-key' } }) });
      const redirectsBefore = redirector.received.length;
      const { call, callId } = await dialAgent(server, number);
      await call.streamAudio(speechFixture('hours'), { trailingSilenceMs: 200 });
      const detail = await eventually(() => detailOf(callId), (body) => body.events?.some((event: { type: string }) => event.type === 'asr_error'), 20_000);
      await call.hangup();
      expect(redirector.received.length - redirectsBefore).toBe(1);
      const asrError = detail.events.find((event: { type: string }) => event.type === 'asr_error');
      expect(asrError.payload.message).toMatch(/HTTP 302/);
    }, 30_000);

    it.each(blocked)('a realtime url on $label: refused before any socket opens', async ({ host, reason }) => {
      const { agentId, number } = await bindAgent(server, { engine: 'realtime', config: { realtime: { url: `ws://${host()}/v1/realtime`, apiKeySecret: 'engine-key' } } });
      await declinedAsNotReady(agentId, number, 'realtime.url', reason);
    }, 30_000);

    it('tool urls on 127.0.0.1, 10.0.0.1 and 169.254.169.254, and an allowed tool endpoint that redirects there: no request reaches them', async () => {
      await storeSigningSecret(server, 'guard-tool-signing');
      const names = ['loopback_lookup', 'private_lookup', 'metadata_lookup', 'redirected_lookup'];
      chat = (request) =>
        hasToolMessage(request) ? { text: ['Sorry, I could not look that up.'] } : { toolCalls: names.map((name) => ({ id: `call_${name}`, name, arguments: '{}' })) };
      const tool = (name: string, url: string) => ({ type: 'webhook', name, description: 'Looks things up.', url, signingSecret: 'guard-tool-signing' });
      const urls = [...blocked.map(({ host }) => `http://${host()}/tool`), redirector.url('/tool')];
      const { number } = await bindAgent(server, { engine: 'pipeline', config: engines({ tools: names.map((name, index) => tool(name, urls[index]!)) }) });
      const redirectsBefore = redirector.received.length;
      const { call, callId } = await dialAgent(server, number);
      await call.streamAudio(speechFixture('order-status'), { trailingSilenceMs: 200 });
      const detail = await eventually(() => detailOf(callId), (body) => body.toolInvocations?.length === names.length, 20_000);
      await call.hangup();
      const byName = Object.fromEntries(detail.toolInvocations.map((invocation: { name: string }) => [invocation.name, invocation]));
      blocked.forEach(({ reason }, index) => {
        expect(byName[names[index]!]).toMatchObject({ result: null, error: expect.stringMatching(new RegExp(`^the business endpoint was not called: refused: ${reason.source}`)) });
      });
      // The allowed endpoint was called once; its redirect was not followed, and the model was told so.
      expect(redirector.received.length - redirectsBefore).toBe(1);
      expect(byName.redirected_lookup).toMatchObject({ result: null, error: 'business endpoint answered HTTP 302' });
    }, 40_000);

    it('webhook subscriptions on 127.0.0.1, 10.0.0.1 and 169.254.169.254, and an allowed receiver that redirects there: each attempt is logged as refused or as the 302, nothing followed', async () => {
      const legit = await server.api('/v1/webhook-subscriptions', { method: 'POST', body: { url: receiver.url, events: ['call.started'] } });
      expect(legit.status).toBe(201);
      receiver.secret = legit.body.secret;
      const subscriptions = server.app.get(WebhookSubscriptionRepository);
      const organizationId = await defaultOrganizationId(server);
      const direct = await Promise.all(blocked.map(({ host }) => subscriptions.create({ organizationId, url: `http://${host()}/hooks`, events: ['call.started'] })));
      const redirected = await subscriptions.create({ organizationId, url: redirector.url('/hooks'), events: ['call.started'] });
      const { number } = await bindAgent(server, { engine: 'echo', config: {} });
      const { call } = await dialAgent(server, number);
      await call.hangup();
      const attemptsOf = async (subscriptionId: string) => {
        const list = await server.api(`/v1/webhook-deliveries?subscriptionId=${subscriptionId}`);
        const delivery = list.body.data[0];
        return delivery ? ((await server.api(`/v1/webhook-deliveries/${delivery.id}`)).body.attempts as { statusCode: number | null; error: string | null }[]) : [];
      };
      for (const [index, { reason }] of blocked.entries()) {
        const directAttempts = await eventually(() => attemptsOf(direct[index]!.id), (attempts) => attempts.length >= 1, 10_000);
        expect(directAttempts[0]).toMatchObject({ statusCode: null, error: expect.stringMatching(new RegExp(`^refused: ${reason.source}`)) });
      }
      const redirectedAttempts = await eventually(() => attemptsOf(redirected.id), (attempts) => attempts.length >= 1, 10_000);
      expect(redirectedAttempts[0]).toMatchObject({ statusCode: 302, error: null });
      // The legitimate subscription got its event, signed as Standard Webhooks says.
      await eventually(async () => receiver.received.length, (count) => count >= 1, 10_000);
      expect(receiver.received[0]).toMatchObject({ type: 'call.started', signatureValid: true });
    }, 40_000);
  });
});

async function defaultOrganizationId(server: TestServer): Promise<string> {
  return (await server.api('/v1/organization')).body.id as string;
}
