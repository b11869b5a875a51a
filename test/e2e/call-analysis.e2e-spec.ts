import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readWav, sineTone } from '@switchboard/audio';
import { type FakeChatReply, FakeOpenAiServer, type RecordedRequest } from '@switchboard/testing';
import { CallAnalysisWorker } from '../../apps/server/src/analysis/call-analysis.worker';
import { bindAgent, dialAgent, fakePipelineEngines, speechFixture } from '../support/conversation-agents';
import { storeSecret } from '../support/secrets';
import { eventually, startTestServer, type TestServer } from '../support/test-server';
import { WebhookReceiver } from '../support/webhook-receiver';
import { WebCallClient } from '../support/web-call-client';

/**
 * Post-call analysis end to end: a simulated Twilio caller talks to a pipeline agent (fake
 * OpenAI-compatible engines), hangs up, and the analysis job queued with the call's end asks the
 * (fake) LLM for a summary, structured data and a verdict. Read back as a user would: the call
 * detail, the ledger, the call.analyzed webhook at a local receiver, a re-run through the API.
 */

const API_KEY_SECRET = 'call-analysis-openai-key';
const FAKE_API_KEY = 'sk-fake-analysis';
const OPERATOR_KEY = 'sk_operator_call_analysis_e2e_0000000000';
const ANALYSIS_USAGE = { promptTokens: 310, completionTokens: 45 };

const STRUCTURED = {
  type: 'object',
  properties: { intent: { type: 'string', enum: ['opening_hours', 'order_status', 'other'] }, day: { type: 'string', pattern: '^[a-z]+$' } },
  required: ['intent'],
  additionalProperties: false,
};

function isAnalysis(request: RecordedRequest): boolean {
  const messages = (request.json as { messages: Array<{ role: string; content: string | null }> }).messages;
  return messages[0]?.role === 'system' && String(messages[0].content).startsWith('You analyse a finished phone call');
}

function messagesOf(request: RecordedRequest): Array<{ role: string; content: string | null }> {
  return (request.json as { messages: Array<{ role: string; content: string | null }> }).messages;
}

describe('post-call analysis (e2e)', () => {
  let openai: FakeOpenAiServer;
  let server: TestServer;
  const receiver = new WebhookReceiver();
  /** What the fake LLM answers to the next analysis requests, in order. */
  let analysisAnswers: string[] = [];
  /** The token counts the fake LLM reports for an analysis request. */
  let analysisUsage: { promptTokens: number; completionTokens: number } = ANALYSIS_USAGE;
  /** The call of the first test (analysed after a restart); the second reads its webhook and ledger. */
  let restartedCallId = '';
  /** The admin key of the organization the first two tests' call belongs to. */
  let organizationKey = '';

  const engines = () => fakePipelineEngines(openai.baseUrl, API_KEY_SECRET);
  const analysisConfig = { enabled: true, summaryPrompt: 'Say why the caller called.', structuredData: STRUCTURED, successCriteria: 'The caller learnt when the store opens.' };
  const analysisRequests = () => openai.requestsTo('chat').filter(isAnalysis);

  const serverEnv = (workerEnabled: boolean) => ({
    ANALYSIS_WORKER_ENABLED: String(workerEnabled),
    ANALYSIS_POLL_INTERVAL_MS: '100',
    WEBHOOK_WORKER_ENABLED: String(workerEnabled),
    WEBHOOK_POLL_INTERVAL_MS: '50',
    // The worker delivers every organization's due deliveries, and earlier spec files leave the
    // shared default organization a backlog to receivers long gone: each fails fast and is not
    // retried during this spec, so call.analyzed is not queued behind minutes of timeouts.
    WEBHOOK_TIMEOUT_MS: '500',
    WEBHOOK_RETRY_BASE_MS: '600000',
  });

  /** A short conversation with an agent whose config analyses its calls; returns the call id once it has ended. */
  async function conversation(target: TestServer, config: object = analysisConfig): Promise<string> {
    const { number } = await bindAgent(target, { engine: 'pipeline', config: { ...engines(), analysis: config } });
    const { call, callId } = await dialAgent(target, number);
    const reply = call.waitForMessage((message) => message.event === 'media', 20_000);
    await call.streamAudio(speechFixture('hours'), { trailingSilenceMs: 200 });
    await reply;
    await eventually(async () => (await target.api(`/v1/calls/${callId}`)).body, (body) => body.transcript?.length >= 2, 15_000);
    await call.hangup();
    await eventually(async () => (await target.api(`/v1/calls/${callId}`)).body, (body) => body.endReason !== null, 10_000);
    return callId;
  }

  const analysisOf = async (target: TestServer, callId: string, done = (status: string) => status === 'completed' || status === 'failed', apiKey?: string) =>
    (await eventually(async () => (await target.api(`/v1/calls/${callId}`, { apiKey })).body, (body) => body.analysis !== null && done(body.analysis.status), 20_000)).analysis;

  /**
   * The same conversation as a browser call in an organization of the test's own (its admin key):
   * its call.analyzed is delivered without queueing behind other organizations' backlogs (the
   * delivery worker shares its slots out per organization).
   */
  async function webConversation(target: TestServer, apiKey: string): Promise<string> {
    const created = await target.api('/v1/agents', { method: 'POST', apiKey, body: { name: 'analysed web agent', engine: 'pipeline', config: { ...engines(), firstMessage: null, analysis: analysisConfig } } });
    expect(created.status).toBe(201);
    const minted = await target.api(`/v1/agents/${created.body.id}/web-calls`, { method: 'POST', apiKey, body: {} });
    const { callId, token } = minted.body as { callId: string; token: string };
    const client = new WebCallClient(`${target.serverUrl.replace(/^http/, 'ws')}/v1/web-calls`);
    await client.opened;
    client.start(callId, token);
    await client.stream(readWav(new Uint8Array(readFileSync(join(__dirname, '..', 'fixtures', 'speech', 'hours.16k.wav')))).samples, 300);
    await eventually(async () => (await target.api(`/v1/calls/${callId}`, { apiKey })).body, (body) => body.transcript?.length >= 2, 15_000);
    client.sendJson({ type: 'hangup' });
    await client.closed;
    await eventually(async () => (await target.api(`/v1/calls/${callId}`, { apiKey })).body, (body) => body.endReason !== null, 10_000);
    return callId;
  }

  beforeAll(async () => {
    openai = await FakeOpenAiServer.start({
      apiKey: FAKE_API_KEY,
      transcription: () => ({ text: 'What time do you open tomorrow morning?' }),
      chat: (request): FakeChatReply =>
        isAnalysis(request) ? { text: [analysisAnswers.shift() ?? '{"summary": "no scripted answer"}'], usage: analysisUsage } : { text: ['We open at nine in the morning.'] },
      speech: () => ({ pcm: sineTone({ frequencyHz: 440, sampleRate: 24_000, durationMs: 600, amplitudeDbfs: -12 }) }),
    });
    await receiver.start();
  }, 30_000);

  afterAll(async () => {
    await server?.close();
    await openai?.close();
    await receiver.stop();
  });

  it('a queued analysis survives a restart between the call end and the analysis: the next server runs it', async () => {
    // The first server ends calls but runs no analysis (as if it stopped right after the call).
    const first = await startTestServer({ ...serverEnv(false), OPERATOR_API_KEY: OPERATOR_KEY });
    let callId = '';
    try {
      const organization = await first.api('/v1/organizations', { apiKey: OPERATOR_KEY, method: 'POST', body: { name: `analysis-${Date.now()}` } });
      expect(organization.status).toBe(201);
      organizationKey = organization.body.adminKey.key as string;
      expect((await first.api('/v1/secrets', { method: 'POST', apiKey: organizationKey, body: { name: API_KEY_SECRET, value: FAKE_API_KEY } })).status).toBe(201);
      // Subscribed before anything is analysed: a subscription receives only events after it.
      const subscription = await first.api('/v1/webhook-subscriptions', { method: 'POST', apiKey: organizationKey, body: { url: receiver.url, events: ['call.analyzed'] } });
      receiver.secret = subscription.body.secret;
      callId = await webConversation(first, organizationKey);
      expect((await first.api(`/v1/calls/${callId}`, { apiKey: organizationKey })).body.analysis).toMatchObject({ status: 'pending', attempts: 0 });
    } finally {
      await first.close();
    }
    analysisAnswers = ['{"summary": "The caller asked when the store opens.", "structuredData": {"intent": "opening_hours", "day": "tomorrow"}, "success": true, "successReason": "The agent said nine."}'];
    server = await startTestServer({ ...serverEnv(true), OPERATOR_API_KEY: OPERATOR_KEY });
    await storeSecret(server, API_KEY_SECRET, FAKE_API_KEY);
    restartedCallId = callId;
    const analysis = await analysisOf(server, callId, undefined, organizationKey);
    expect(analysis).toMatchObject({
      status: 'completed',
      summary: 'The caller asked when the store opens.',
      structuredData: { intent: 'opening_hours', day: 'tomorrow' },
      structuredDataErrors: null,
      success: true,
      successReason: 'The agent said nine.',
      model: 'gpt-test',
      attempts: 1,
      inputTokens: ANALYSIS_USAGE.promptTokens,
      outputTokens: ANALYSIS_USAGE.completionTokens,
    });
    // The model saw the conversation and the schema.
    const [request] = analysisRequests().slice(-1);
    const [system, user] = messagesOf(request!);
    // The schema as stored (jsonb orders keys its own way).
    expect(system?.content).toContain('"enum":["opening_hours","order_status","other"]');
    expect(system?.content).toContain('"required":["intent"]');
    expect(user?.content).toContain('Caller: What time do you open tomorrow morning?');
    expect(user?.content).toContain('Agent: We open at nine in the morning.');
  }, 90_000);

  it('is announced as a signed call.analyzed webhook and charged as analysis lines at the LLM token prices', async () => {
    // A delivery in the shared organization waits for the backlog earlier spec files left (see serverEnv).
    const callId = restartedCallId;
    const delivered = await eventually(async () => receiver.received.filter((request) => request.type === 'call.analyzed' && request.body.data.callId === callId), (found) => found.length >= 1, 60_000);
    expect(delivered[0]).toMatchObject({ signatureValid: true, body: { type: 'call.analyzed', data: { callId, analysis: { status: 'completed', summary: 'The caller asked when the store opens.' } } } });
    const cost = (await eventually(async () => (await server.api(`/v1/calls/${callId}`, { apiKey: organizationKey })).body.cost, (body) => body?.lines?.some((line: { component: string }) => line.component === 'analysis_input'), 10_000));
    const analysisLines = cost.lines.filter((line: { component: string }) => line.component.startsWith('analysis_'));
    expect(analysisLines).toEqual([
      expect.objectContaining({ component: 'analysis_input', kind: 'correction', reason: 'analysis', quantity: ANALYSIS_USAGE.promptTokens, unit: 'token' }),
      expect.objectContaining({ component: 'analysis_output', kind: 'correction', reason: 'analysis', quantity: ANALYSIS_USAGE.completionTokens, unit: 'token' }),
    ]);
  }, 90_000);

  it('asks once more with the validation errors when the structured data does not match the schema, and keeps the mended answer', async () => {
    analysisAnswers = [
      '{"summary": "Hours.", "structuredData": {"intent": "weather"}, "success": true, "successReason": "ok"}',
      '{"summary": "The caller asked for the hours.", "structuredData": {"intent": "opening_hours"}, "success": true, "successReason": "Told nine."}',
    ];
    const before = analysisRequests().length;
    const callId = await conversation(server);
    const analysis = await analysisOf(server, callId);
    expect(analysis).toMatchObject({ status: 'completed', summary: 'The caller asked for the hours.', structuredData: { intent: 'opening_hours' }, structuredDataErrors: null, inputTokens: 2 * ANALYSIS_USAGE.promptTokens });
    const requests = analysisRequests().slice(before);
    expect(requests).toHaveLength(2);
    const retry = messagesOf(requests[1]!);
    expect(retry.at(-2)).toEqual({ role: 'assistant', content: '{"summary": "Hours.", "structuredData": {"intent": "weather"}, "success": true, "successReason": "ok"}' });
    expect(retry.at(-1)?.content).toMatch(/^That answer is not valid: "structuredData" does not match the schema: .*intent/);
  }, 60_000);

  it('stores what failed when the retry does not match either: the data as given, with the errors', async () => {
    analysisAnswers = ['{"summary": "Hours.", "structuredData": {"intent": 42}}', '{"summary": "Hours again.", "structuredData": {"intent": "weather", "extra": 1}}'];
    const callId = await conversation(server);
    const analysis = await analysisOf(server, callId);
    expect(analysis.status).toBe('completed');
    expect(analysis.summary).toBe('Hours again.');
    expect(analysis.structuredData).toEqual({ intent: 'weather', extra: 1 });
    expect(analysis.structuredDataErrors).toHaveLength(1);
    expect(analysis.structuredDataErrors[0]).toMatch(/does not match the schema/);
    expect(analysis.success).toBeNull(); // neither answer said
  }, 60_000);

  it("counts a provider's negative token count as 0, as live calls do: the analysis completes and is charged what is countable", async () => {
    analysisAnswers = ['{"summary": "Counted.", "structuredData": {"intent": "other"}, "success": true, "successReason": "ok"}'];
    analysisUsage = { promptTokens: -5_000, completionTokens: ANALYSIS_USAGE.completionTokens };
    try {
      const callId = await conversation(server);
      expect(await analysisOf(server, callId)).toMatchObject({ status: 'completed', summary: 'Counted.', attempts: 1, inputTokens: 0, outputTokens: ANALYSIS_USAGE.completionTokens });
      const cost = await eventually(async () => (await server.api(`/v1/calls/${callId}`)).body.cost, (body) => body?.lines?.some((line: { component: string }) => line.component === 'analysis_output'), 10_000);
      const analysisLines = cost.lines.filter((line: { component: string }) => line.component.startsWith('analysis_'));
      expect(analysisLines).toEqual([expect.objectContaining({ component: 'analysis_output', quantity: ANALYSIS_USAGE.completionTokens })]);
    } finally {
      analysisUsage = ANALYSIS_USAGE;
    }
  }, 60_000);

  it('re-runs through the API with the agent\'s current settings (admin keys only), charging its tokens again', async () => {
    analysisAnswers = ['{"summary": "First.", "structuredData": {"intent": "other"}, "success": false, "successReason": "No."}'];
    const callId = await conversation(server);
    expect((await analysisOf(server, callId)).summary).toBe('First.');
    const readKey = (await server.api('/v1/api-keys', { method: 'POST', body: { name: 'analysis reader', scopes: ['read'] } })).body.key as string;
    expect((await server.api(`/v1/calls/${callId}/analysis`, { method: 'POST', apiKey: readKey })).status).toBe(403);
    analysisAnswers = ['{"summary": "Second.", "structuredData": {"intent": "opening_hours"}, "success": true, "successReason": "Yes."}'];
    const rerun = await server.api(`/v1/calls/${callId}/analysis`, { method: 'POST' });
    expect(rerun).toMatchObject({ status: 202, body: { callId, status: 'pending' } });
    const again = await eventually(async () => (await server.api(`/v1/calls/${callId}`)).body.analysis, (value) => value.summary === 'Second.', 20_000);
    expect(again).toMatchObject({ status: 'completed', success: true, inputTokens: 2 * ANALYSIS_USAGE.promptTokens });
    const unknown = await server.api('/v1/calls/00000000-0000-4000-8000-000000000000/analysis', { method: 'POST' });
    expect(unknown.status).toBe(404);
  }, 60_000);

  it('an agent without analysis.enabled queues nothing, and a re-run says why', async () => {
    const callId = await conversation(server, { enabled: false });
    await server.app.get(CallAnalysisWorker).idle();
    expect((await server.api(`/v1/calls/${callId}`)).body.analysis).toBeNull();
    const rerun = await server.api(`/v1/calls/${callId}/analysis`, { method: 'POST' });
    expect(rerun).toMatchObject({ status: 409, body: { code: 'analysis_not_configured' } });
  }, 60_000);

  it('refuses, when the agent is saved, a structured data schema the server would not run', async () => {
    const created = await server.api('/v1/agents', {
      method: 'POST',
      body: { name: 'bad analysis', engine: 'pipeline', config: { ...engines(), analysis: { enabled: true, structuredData: { type: 'string' } } } },
    });
    expect(created.status).toBe(400);
    expect(created.body.problems).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'analysis.structuredData' })]));
  });
});
