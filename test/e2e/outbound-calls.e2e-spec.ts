import { sineTone } from '@switchboard/audio';
import { FakeOpenAiServer, FakeTwilioRestServer, type RecordedRequest } from '@switchboard/testing';
import { speechFixture } from '../support/conversation-agents';
import { createOtherOrganizationKey, createRepositories, createTestPrisma, uniqueE164 } from '../support/database';
import { answeredOutboundCall, postCall, postSignedTwilioForm, sendAmdResult, setUpLine, type OrganizationLine } from '../support/outbound-calls';
import { storeSecret } from '../support/secrets';
import { connectTwilioAccount, type TenantTwilioAccount } from '../support/tenant-twilio';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

/**
 * Outbound calls end to end: POST /v1/calls against the real server and Postgres, Twilio's REST API
 * played by FakeTwilioRestServer (the real twilio-node client pointed at it), and Twilio's side of
 * the placed call (signed TwiML fetch, status and AMD callbacks, media stream) played by the
 * simulated caller. Everything runs in an organization of this file's own, with its own Twilio
 * account (on the fake): its calls are placed with that account, and Twilio signs their callbacks
 * with it.
 */

/** The organization's engine key, in its vault. */
const API_KEY_SECRET = 'outbound-calls-openai-key';
const FAKE_API_KEY = 'sk-fake-outbound-e2e';

function speechFor(text: string): Int16Array {
  return sineTone({ frequencyHz: 440, sampleRate: 24_000, durationMs: Math.max(200, text.length * 30), amplitudeDbfs: -12 });
}

function systemPromptOf(request: RecordedRequest): string | null {
  const messages = (request.json as { messages: { role: string; content: string | null }[] }).messages;
  return messages.find((message) => message.role === 'system')?.content ?? null;
}

describe('outbound calls (e2e)', () => {
  let server: TestServer;
  let twilioRest: FakeTwilioRestServer;
  let openai: FakeOpenAiServer;
  const prisma = createTestPrisma(2);
  const repositories = createRepositories(prisma);
  /** Admin key of this file's organization. */
  let orgKey: string;
  /** This file's organization's own Twilio account. */
  let account: TenantTwilioAccount;
  let pipelineLine: OrganizationLine;
  let echoLine: OrganizationLine;

  const engines = () => ({
    stt: { provider: 'openai', model: 'whisper-1', baseUrl: openai.baseUrl, apiKeySecret: API_KEY_SECRET },
    llm: { provider: 'openai', model: 'gpt-test', baseUrl: openai.baseUrl, apiKeySecret: API_KEY_SECRET },
    tts: { provider: 'openai', model: 'tts-test', baseUrl: openai.baseUrl, apiKeySecret: API_KEY_SECRET, voice: 'alloy' },
  });

  beforeAll(async () => {
    openai = await FakeOpenAiServer.start({
      apiKey: FAKE_API_KEY,
      transcription: () => ({ text: 'What time do you open?' }),
      chat: () => ({ text: ['We open at nine.'] }),
      speech: (request) => ({ pcm: speechFor(String((request.json as { input: string }).input)), chunkBytes: [4800] }),
    });
    twilioRest = await FakeTwilioRestServer.start();
    server = await startTestServer({
      TWILIO_ACCOUNT_SID: twilioRest.accountSid,
      TWILIO_AUTH_TOKEN: twilioRest.authToken,
      TWILIO_API_BASE_URL: twilioRest.baseUrl,
    });
    orgKey = await createOtherOrganizationKey(repositories, 'outbound-calls');
    account = await connectTwilioAccount(server, orgKey, twilioRest);
    await storeSecret(server, API_KEY_SECRET, FAKE_API_KEY, orgKey);
    pipelineLine = await setUpLine(server, orgKey, {
      engine: 'pipeline',
      config: {
        ...engines(),
        systemPrompt: 'You call {{call.params.customerName}} about order {{call.params.orderId}}. Answered by {{call.answeredBy}}.',
        firstMessage: 'Hello {{call.params.customerName}}, this is Acme about order {{call.params.orderId}}.',
      },
    }, { twilio: twilioRest, account });
    echoLine = await setUpLine(server, orgKey, { engine: 'echo' }, { twilio: twilioRest, account });
  }, 30_000);

  afterAll(async () => {
    await server?.close();
    await Promise.all([twilioRest?.close(), openai?.close()]);
    await prisma.$disconnect();
  });

  const detailOf = async (callId: string) => (await server.api(`/v1/calls/${callId}`, { apiKey: orgKey })).body;
  const hangUp = (callId: string, apiKey = orgKey) => server.api(`/v1/calls/${callId}/hangup`, { method: 'POST', apiKey });
  /** Callees are unique numbers, so the callee names the create request. */
  const createRequestTo = (callee: string) => twilioRest.requestsFor('create_call').find((request) => request.form['To'] === callee);

  it('places the call through Twilio, connects the agent with the call\'s variables and AMD verdict, then hangs up', async () => {
    const callee = uniqueE164();
    const placed = await postCall(server, orgKey, {
      agentId: pipelineLine.agentId,
      to: callee,
      from: pipelineLine.number,
      variables: { customerName: 'Ada', orderId: '4567' },
      machineDetection: 'DetectMessageEnd',
    });
    expect(placed.status).toBe(201);
    const call = placed.body;
    expect(call).toMatchObject({
      direction: 'outbound',
      status: 'queued',
      fromNumber: pipelineLine.number,
      toNumber: callee,
      agentId: pipelineLine.agentId,
      agentConfigVersion: 1,
      variables: { customerName: 'Ada', orderId: '4567' },
      machineDetection: 'DetectMessageEnd',
      answeredBy: null,
      endReason: null,
    });
    expect(call.twilioCallSid).toMatch(/^CA[0-9a-f]{32}$/);

    // What Twilio was asked to do, as it received it (the real twilio-node client, authenticated as
    // the organization's own account, never the operator's).
    expect(call.twilioAccountSid).toBe(account.accountSid);
    expect(twilioRest.call(call.twilioCallSid)).toMatchObject({
      accountSid: account.accountSid,
      to: callee,
      from: pipelineLine.number,
      status: 'queued',
      direction: 'outbound-api',
      machineDetection: 'DetectMessageEnd',
    });
    const create = createRequestTo(callee);
    expect(create).toMatchObject({ accountSid: account.accountSid, authorized: true, status: 201 });
    expect(create?.form).toMatchObject({
      To: callee,
      From: pipelineLine.number,
      Url: `https://switchboard.test/twilio/outbound/${call.id}`,
      Method: 'POST',
      StatusCallback: 'https://switchboard.test/twilio/status',
      StatusCallbackMethod: 'POST',
      StatusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
      MachineDetection: 'DetectMessageEnd',
      AsyncAmd: 'true',
      AsyncAmdStatusCallback: 'https://switchboard.test/twilio/amd',
    });

    // The phone rings, the callee answers, detection decides: Twilio reports each step.
    const callee$ = answeredOutboundCall(server, call, account);
    expect((await callee$.sendStatusCallback('ringing')).status).toBe(204);
    expect((await callee$.sendStatusCallback('in-progress')).status).toBe(204);
    expect((await sendAmdResult(server, call.twilioCallSid, 'human', account)).status).toBe(204);

    // Twilio fetches the TwiML: a stream to the media URL with the call id and a fresh single-use token.
    // The organization's own account gets a media path of its own (the upgrade is verified with its token).
    const twiml = await callee$.dial();
    expect(twiml.rejected).toBe(false);
    expect(twiml.stream?.url).toBe(`wss://switchboard.test/twilio/media/${account.accountSid}`);
    expect(twiml.stream?.parameters['callId']).toBe(call.id);
    expect(twiml.stream?.parameters['streamToken']).toMatch(/^[\w-]{43}$/);

    const speechBefore = openai.requestsTo('speech').length;
    const chatBefore = openai.requestsTo('chat').length;
    await callee$.connectMedia();
    await callee$.waitForMessage((message) => message.event === 'media', 10_000);
    expect(openai.requestsTo('speech').slice(speechBefore).map((request) => (request.json as { input: string }).input)[0]).toBe(
      'Hello Ada, this is Acme about order 4567.',
    );
    // The callee speaks: the model sees the system prompt rendered with the variables and the verdict.
    await callee$.streamAudio(speechFixture('hours'), { trailingSilenceMs: 200 });
    await eventually(async () => openai.requestsTo('chat').length, (count) => count > chatBefore, 15_000);
    expect(systemPromptOf(openai.requestsTo('chat')[chatBefore]!)).toBe('You call Ada about order 4567. Answered by human.');

    const live = await detailOf(call.id);
    expect(live).toMatchObject({ status: 'in-progress', answeredBy: 'human', endReason: null });
    expect(live.answeredAt).toEqual(expect.any(String));
    expect(live.statusTimeline.map((entry: { status: string }) => entry.status)).toEqual(['queued', 'ringing', 'in-progress']);
    expect(live.events).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'amd_result', payload: { answeredBy: 'human', detectionDurationMs: 1850 } })]));

    // Hang-up through the API: Twilio is told to complete the call, and (as Twilio does) ends the stream.
    twilioRest.onCallUpdate = async (update) => {
      if (update.call.sid === call.twilioCallSid) await callee$.hangup();
    };
    const hungUp = await hangUp(call.id);
    expect(hungUp.status).toBe(200);
    expect(hungUp.body).toMatchObject({ id: call.id, endReason: 'api_hangup' });
    expect(hungUp.body.endedAt).toEqual(expect.any(String));
    const update = twilioRest.requestsFor('update_call').find((request) => request.callSid === call.twilioCallSid);
    expect(update).toMatchObject({ accountSid: account.accountSid, authorized: true, status: 200, form: { Status: 'completed' } });
    expect(twilioRest.call(call.twilioCallSid)?.status).toBe('completed');
    await callee$.closed;

    const ended = await eventually(() => detailOf(call.id), (body) => body.streamEndedAt !== null || body.events.some((e: { type: string }) => e.type === 'stream_closed'), 5_000);
    expect(ended.endReason).toBe('api_hangup');
    expect(ended.events.map((event: { type: string }) => event.type)).toEqual(expect.arrayContaining(['stream_started', 'hangup_requested']));
    expect(ended.transcript[0]).toMatchObject({ role: 'assistant', source: 'first_message', text: 'Hello Ada, this is Acme about order 4567.' });

    const again = await hangUp(call.id);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('call_already_ended');
    twilioRest.onCallUpdate = undefined;
  }, 45_000);

  it('records a verdict that arrives after the stream started (async AMD) in the call detail', async () => {
    const placed = await postCall(server, orgKey, { agentId: echoLine.agentId, to: uniqueE164(), from: echoLine.number, machineDetection: 'Enable' });
    expect(placed.status).toBe(201);
    const call = placed.body;
    const callee = answeredOutboundCall(server, call, account);
    await callee.dial();
    await callee.connectMedia();
    await eventually(() => detailOf(call.id), (body) => body.streamStartedAt !== null);

    expect((await sendAmdResult(server, call.twilioCallSid, 'machine_end_beep', account)).status).toBe(204);
    const detail = await detailOf(call.id);
    expect(detail.answeredBy).toBe('machine_end_beep');
    expect(detail.events.filter((event: { type: string }) => event.type === 'amd_result')).toHaveLength(1);

    await callee.hangup();
    await eventually(() => detailOf(call.id), (body) => body.endReason !== null);
    // The media stream ended the call first: the API then has nothing left to hang up.
    expect((await hangUp(call.id)).status).toBe(409);
  }, 20_000);

  it('hangs up a call still ringing, and frees its place at once', async () => {
    const placed = await postCall(server, orgKey, { agentId: echoLine.agentId, to: uniqueE164(), from: echoLine.number });
    expect(placed.status).toBe(201);
    const hungUp = await hangUp(placed.body.id);
    expect(hungUp.status).toBe(200);
    expect(twilioRest.call(placed.body.twilioCallSid)?.status).toBe('completed');
    const stored = await prisma.call.findUniqueOrThrow({ where: { id: placed.body.id } });
    expect(stored).toMatchObject({ endReason: 'api_hangup', streamStartedAt: null });
    expect(stored.endedAt).toBeInstanceOf(Date);
  });

  it('answers 502 when Twilio refuses the call, and records it as failed, never live', async () => {
    twilioRest.failNext('create_call', { status: 400, code: 21211, message: "The 'To' number +15005550001 is not a valid phone number." });
    const refused = await postCall(server, orgKey, { agentId: echoLine.agentId, to: '+15005550001', from: echoLine.number });

    expect(refused.status).toBe(502);
    expect(refused.body).toMatchObject({
      code: 'twilio_error',
      message: "Twilio did not place the call: The 'To' number +15005550001 is not a valid phone number.",
      twilio: { httpStatus: 400, code: 21211 },
    });
    const stored = await prisma.call.findUniqueOrThrow({ where: { id: refused.body.callId } });
    expect(stored).toMatchObject({ status: 'failed', endReason: 'twilio_error', twilioCallSid: null, direction: 'outbound' });
    expect(stored.endedAt).toBeInstanceOf(Date);
    const detail = await detailOf(refused.body.callId);
    expect(detail.events).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'twilio_error', payload: expect.objectContaining({ httpStatus: 400, code: 21211 }) })]),
    );
    const organization = await server.api('/v1/organization', { apiKey: orgKey });
    expect(organization.body.activeCalls).toBe(0);
  });

  it('answers 502 when Twilio fails with a server error, leaving nothing live', async () => {
    twilioRest.failNext('create_call', 'server_error');
    const refused = await postCall(server, orgKey, { agentId: echoLine.agentId, to: uniqueE164(), from: echoLine.number });
    expect(refused.status).toBe(502);
    expect(refused.body.twilio).toMatchObject({ httpStatus: 500, code: 20500 });
    expect((await server.api('/v1/organization', { apiKey: orgKey })).body.activeCalls).toBe(0);
  });

  describe('Twilio\'s TwiML request', () => {
    it('hangs up (no stream) a request whose CallSid is not the call\'s', async () => {
      const placed = await postCall(server, orgKey, { agentId: echoLine.agentId, to: uniqueE164(), from: echoLine.number });
      const impostor = answeredOutboundCall(server, { ...placed.body, twilioCallSid: `CA${'e'.repeat(32)}` }, account);
      const twiml = await impostor.dial();
      expect(twiml.stream).toBeNull();
      expect(twiml.verbs.map((verb) => verb.name)).toEqual(['Hangup']);
      expect(await prisma.call.findUniqueOrThrow({ where: { id: placed.body.id } })).toMatchObject({ streamTokenHash: null, twilioCallSid: placed.body.twilioCallSid });
      await hangUp(placed.body.id);
    });

    it('refuses unsigned requests with 403', async () => {
      const placed = await postCall(server, orgKey, { agentId: echoLine.agentId, to: uniqueE164(), from: echoLine.number });
      const callee = answeredOutboundCall(server, placed.body, account);
      await expect(callee.dial({ signature: 'omit' })).rejects.toMatchObject({ httpStatus: 403 });
      const amd = await fetch(`${server.serverUrl}/twilio/amd`, { method: 'POST', body: new URLSearchParams({ CallSid: placed.body.twilioCallSid, AccountSid: account.accountSid, AnsweredBy: 'human' }) });
      expect(amd.status).toBe(403);
      expect((await detailOf(placed.body.id)).answeredBy).toBeNull();
      await hangUp(placed.body.id);
    });

    it('acknowledges an AMD result for an unknown call, and names a malformed field', async () => {
      expect((await sendAmdResult(server, `CA${'d'.repeat(32)}`, 'human', account)).status).toBe(204);
      const malformed = await postSignedTwilioForm(server, '/twilio/amd', { AccountSid: account.accountSid, CallSid: `CA${'d'.repeat(32)}`, AnsweredBy: 'Human!' }, account);
      expect(malformed.status).toBe(400);
      const problem = (await malformed.json()) as { details: { field: string }[] };
      expect(problem.details[0]?.field).toBe('AnsweredBy');
    });
  });

  describe('access', () => {
    const validBody = () => ({ agentId: echoLine.agentId, to: uniqueE164(), from: echoLine.number });

    it('answers 401 without a key and with a revoked key, placing nothing', async () => {
      const before = twilioRest.requestsFor('create_call').length;
      const missing = await postCall(server, null, validBody());
      expect(missing.status).toBe(401);
      expect(missing.body.code).toBe('missing_api_key');

      const created = await server.api('/v1/api-keys', { method: 'POST', apiKey: orgKey, body: { name: 'soon revoked', scopes: ['admin'] } });
      expect((await server.api(`/v1/api-keys/${created.body.id}`, { method: 'DELETE', apiKey: orgKey })).status).toBe(204);
      const revoked = await postCall(server, created.body.key, validBody());
      expect(revoked.status).toBe(401);
      expect(revoked.body.code).toBe('invalid_api_key');
      expect((await server.api('/v1/calls/00000000-0000-4000-8000-000000000000/hangup', { method: 'POST', apiKey: null })).status).toBe(401);
      expect(twilioRest.requestsFor('create_call').length).toBe(before);
    });

    it('answers 403 to a read-scoped key on POST /v1/calls and on hang-up', async () => {
      const created = await server.api('/v1/api-keys', { method: 'POST', apiKey: orgKey, body: { name: 'reader', scopes: ['read'] } });
      const refused = await postCall(server, created.body.key, validBody());
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ code: 'insufficient_scope', requiredScope: 'admin' });
      expect((await server.api('/v1/calls/00000000-0000-4000-8000-000000000000/hangup', { method: 'POST', apiKey: created.body.key })).status).toBe(403);
    });

    it('answers 404 for another organization\'s call, and never hangs it up', async () => {
      const placed = await postCall(server, orgKey, validBody());
      expect(placed.status).toBe(201);
      // The server's admin key belongs to the default organization, not this file's.
      const foreign = await server.api(`/v1/calls/${placed.body.id}/hangup`, { method: 'POST' });
      expect(foreign.status).toBe(404);
      expect(foreign.body.code).toBe('call_not_found');
      expect((await server.api(`/v1/calls/${placed.body.id}`)).status).toBe(404);
      expect(twilioRest.call(placed.body.twilioCallSid)?.status).toBe('queued');
      expect((await hangUp(placed.body.id)).status).toBe(200);
    });

    it('refuses an agent or a caller number of another organization with 400', async () => {
      const otherKey = await createOtherOrganizationKey(repositories, 'outbound-calls-foreign');
      const foreignAccount = await connectTwilioAccount(server, otherKey, twilioRest);
      const foreignLine = await setUpLine(server, otherKey, { engine: 'echo' }, { twilio: twilioRest, account: foreignAccount });
      const foreignAgent = await postCall(server, orgKey, { ...validBody(), agentId: foreignLine.agentId });
      expect(foreignAgent.status).toBe(400);
      expect(foreignAgent.body.code).toBe('agent_not_found');
      const foreignNumber = await postCall(server, orgKey, { ...validBody(), from: foreignLine.number });
      expect(foreignNumber.status).toBe(400);
      expect(foreignNumber.body).toMatchObject({ code: 'from_number_not_owned' });
      expect(foreignNumber.body.message).toContain(foreignLine.number);
    });
  });

  describe('validation', () => {
    it.each([
      ['a "to" that is not E.164', { to: '5550100' }, 'to'],
      ['a "from" that is not E.164', { from: '+1 555 0100' }, 'from'],
      ['an agentId that is not a uuid', { agentId: 'agent-1' }, 'agentId'],
      ['a variable that is not a string', { variables: { orderId: 4567 } }, 'variables.orderId'],
      ['variables that are not an object', { variables: ['a'] }, 'variables'],
      ['a variable name a prompt cannot use', { variables: { 'order id': '1' } }, 'variables.order id'],
      ['a variable value over 1000 characters', { variables: { note: 'x'.repeat(1001) } }, 'variables.note'],
      ['an unknown machineDetection mode', { machineDetection: 'Always' }, 'machineDetection'],
      ['an unknown field', { record: true }, ''],
    ])('answers 400 naming the field for %s, placing nothing', async (_label, override, field) => {
      const before = twilioRest.requestsFor('create_call').length;
      const answer = await postCall(server, orgKey, { agentId: echoLine.agentId, to: uniqueE164(), from: echoLine.number, ...override });
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('validation_failed');
      expect(answer.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
      expect(twilioRest.requestsFor('create_call').length).toBe(before);
    });

    it('answers 400 to more than 50 variables and to a missing body field', async () => {
      const many = Object.fromEntries(Array.from({ length: 51 }, (_, index) => [`v${index}`, 'x']));
      expect((await postCall(server, orgKey, { agentId: echoLine.agentId, to: uniqueE164(), from: echoLine.number, variables: many })).status).toBe(400);
      const missing = await postCall(server, orgKey, { agentId: echoLine.agentId, from: echoLine.number });
      expect(missing.status).toBe(400);
      expect(missing.body.details[0].field).toBe('to');
    });
  });
});
