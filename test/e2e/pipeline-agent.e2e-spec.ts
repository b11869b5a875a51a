import { sample } from '../support/prometheus-text';
import { FakeBusinessEndpoint, type FakeChatReply, FakeOpenAiServer, FakeTwilioRestServer, type RecordedRequest } from '@switchboard/testing';
import { bindAgent, dialAgent, fakePipelineEngines, framesReceived, lastUserMessage, speechFixture, toneSpeechFor } from '../support/conversation-agents';
import { storeSecret, storeSigningSecret } from '../support/secrets';
import { toolSignatureIsValid } from '../support/tool-signature';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

/**
 * The pipeline agent end to end: a simulated Twilio caller speaks real recorded utterances to the
 * running server (real Silero VAD and turn detection), which transcribes, thinks and speaks through
 * local OpenAI-compatible fakes (STT, LLM, TTS), calls a real local business endpoint for tools and
 * Twilio's (fake) REST API for hang-up and transfer. Every assertion reads what a user would see:
 * the audio and messages on the call, the requests the engines received, and GET /v1/calls/:id.
 */

/**
 * The agents run in the default organization (bindAgent); their secrets are in its vault, under
 * names of this file's own (other spec files store theirs in the same vault at the same time).
 */
const TOOL_SECRET_NAME = 'pipeline-agent-lookup-signing';
const API_KEY_SECRET = 'pipeline-agent-openai-key';
const FAKE_API_KEY = 'sk-fake-e2e';



function chatMessages(request: RecordedRequest): { role: string; content: string | null; tool_calls?: unknown[] }[] {
  return (request.json as { messages: { role: string; content: string | null }[] }).messages;
}

describe('pipeline agent over a simulated Twilio call (e2e)', () => {
  let server: TestServer;
  let openai: FakeOpenAiServer;
  let twilioRest: FakeTwilioRestServer;
  let business: FakeBusinessEndpoint;
  /** The tool's Standard Webhooks signing secret (whsec_...), as stored in the vault. */
  let toolSecret: string;
  /** What the fake recogniser hears next, and how the fake model answers; each test sets them. */
  let transcript = 'hello';
  let chat: (request: RecordedRequest) => FakeChatReply = () => ({ text: ['Hello.'] });

  const engines = () => fakePipelineEngines(openai.baseUrl, API_KEY_SECRET);

  beforeAll(async () => {
    openai = await FakeOpenAiServer.start({
      apiKey: FAKE_API_KEY,
      transcription: () => ({ text: transcript }),
      chat: (request) => chat(request),
      // The TTS streams its PCM in chunks of awkward sizes (odd byte counts split samples): the call still gets it whole.
      speech: (request) => ({ pcm: toneSpeechFor(String((request.json as { input: string }).input)), chunkBytes: [1, 161, 1234, 4801] }),
    });
    twilioRest = await FakeTwilioRestServer.start({ acceptUnknownCalls: true });
    business = await FakeBusinessEndpoint.start();
    business.reply = (request) => {
      const { arguments: args } = JSON.parse(request.bodyText) as { arguments: { orderId: string } };
      return { status: 200, body: JSON.stringify({ orderId: args.orderId, status: 'shipped', eta: 'tomorrow' }), contentType: 'application/json', delayMs: 1300 };
    };
    server = await startTestServer({
      TWILIO_ACCOUNT_SID: twilioRest.accountSid,
      TWILIO_AUTH_TOKEN: twilioRest.authToken,
      TWILIO_API_BASE_URL: twilioRest.baseUrl,
    });
    await storeSecret(server, API_KEY_SECRET, FAKE_API_KEY);
    toolSecret = await storeSigningSecret(server, TOOL_SECRET_NAME);
  }, 30_000);

  afterAll(async () => {
    await server?.close();
    await Promise.all([openai?.close(), twilioRest?.close(), business?.close()]);
  });

  const detailOf = async (callId: string) => (await server.api(`/v1/calls/${callId}`)).body;

  it('greets the caller with the first message, variables filled in', async () => {
    const { number } = await bindAgent(server, { engine: 'pipeline', config: { ...engines(), firstMessage: 'Hello {{caller.number}}, this is Acme.' } });
    const before = openai.requestsTo('speech').length;
    const { call, callId } = await dialAgent(server, number, '+15550102030');
    await call.waitForMessage((message) => message.event === 'media', 10_000);
    const detail = await eventually(() => detailOf(callId), (body) => body.transcript?.length >= 1, 10_000);
    expect(detail.transcript[0]).toMatchObject({ index: 0, role: 'assistant', source: 'first_message', text: 'Hello +15550102030, this is Acme.', interrupted: false });
    expect(openai.requestsTo('speech').slice(before).map((request) => (request.json as { input: string }).input)).toEqual(['Hello +15550102030, this is Acme.']);
    await call.hangup();
  }, 30_000);

  it('answers a spoken question: transcript, reply audio, and a complete latency waterfall', async () => {
    transcript = 'What time do you open tomorrow morning?';
    chat = () => ({ text: ['We open at nine', ' in the morning. ', 'See you then!'], usage: { promptTokens: 40, completionTokens: 12 } });
    const { number } = await bindAgent(server, { engine: 'pipeline', config: { ...engines(), systemPrompt: 'You are Acme support. The caller is {{caller.number}}.' } });
    const chatBefore = openai.requestsTo('chat').length;
    const { call, callId } = await dialAgent(server, number, '+15550109999');
    // Listening before speaking: the reply may start before the trailing silence has been sent.
    const firstReplyFrame = call.waitForMessage((message) => message.event === 'media', 20_000);
    await call.streamAudio(speechFixture('hours'), { trailingSilenceMs: 200 });
    await firstReplyFrame;
    const detail = await eventually(() => detailOf(callId), (body) => body.transcript?.length >= 2 && body.latency?.[0]?.firstMarkEchoedMs != null, 15_000);
    await call.hangup();

    expect(detail.transcript.map((turn: { role: string; text: string }) => [turn.role, turn.text])).toEqual([
      ['user', 'What time do you open tomorrow morning?'],
      ['assistant', 'We open at nine in the morning. See you then!'],
    ]);
    const request = openai.requestsTo('chat')[chatBefore]!;
    expect(chatMessages(request)[0]).toEqual({ role: 'system', content: 'You are Acme support. The caller is +15550109999.' });
    expect(lastUserMessage(request)).toBe('What time do you open tomorrow morning?');
    // Streaming overlap: the first clause went to TTS on its own, before the model had finished.
    expect((openai.requestsTo('speech').at(-2)!.json as { input: string }).input).toBe('We open at nine in the morning.');
    const waterfall = detail.latency[0];
    for (const step of ['endOfSpeechMs', 'endOfTurnMs', 'asrFinalMs', 'llmFirstTokenMs', 'ttsFirstByteMs', 'firstFrameSentMs', 'firstMarkEchoedMs']) {
      expect(waterfall[step]).toEqual(expect.any(Number));
    }
    expect(waterfall.endOfSpeechMs).toBeLessThanOrEqual(waterfall.endOfTurnMs);
    expect(waterfall.endOfTurnMs).toBeLessThanOrEqual(waterfall.asrFinalMs);
    expect(waterfall.asrFinalMs).toBeLessThanOrEqual(waterfall.llmFirstTokenMs);
    expect(waterfall.llmFirstTokenMs).toBeLessThanOrEqual(waterfall.firstFrameSentMs);
    expect(waterfall.firstFrameSentMs).toBeLessThanOrEqual(waterfall.firstMarkEchoedMs);
    process.stdout.write(`pipeline voice-to-voice (fake engines on loopback): ${waterfall.voiceToVoiceMs} ms\n`);
    // The VAD ran through the batched inference workers, and /metrics shows its queue.
    const metrics = await (await fetch(`${server.serverUrl}/metrics`)).text();
    expect(sample(metrics, 'switchboard_inference_queue_wait_seconds_count{model="silero-vad-v5"}')).toBeGreaterThan(50);
  }, 30_000);

  it('calls a business tool with a signed request, says a filler while it is slow, and answers with its result', async () => {
    transcript = 'Where is my order four five six seven?';
    chat = (request) =>
      chatMessages(request).some((message) => message.role === 'tool')
        ? { text: ['Your order 4567 has shipped and arrives tomorrow.'] }
        : { toolCalls: [{ id: 'call_lookup_1', name: 'lookup_order', arguments: JSON.stringify({ orderId: '4567' }) }] };
    const { number, agentId } = await bindAgent(server, {
      engine: 'pipeline',
      config: {
        ...engines(),
        tools: [
          {
            type: 'webhook',
            name: 'lookup_order',
            description: 'Looks up an order by its number.',
            parameters: { type: 'object', properties: { orderId: { type: 'string', pattern: '^[0-9]+$' } }, required: ['orderId'], additionalProperties: false },
            url: business.url('/tools/lookup'),
            signingSecret: TOOL_SECRET_NAME,
            fillerMessage: 'Let me look that up.',
          },
        ],
      },
    });
    const businessBefore = business.received.length;
    const { call, callId } = await dialAgent(server, number, '+15550104567');
    await call.streamAudio(speechFixture('order-status'), { trailingSilenceMs: 200 });
    const detail = await eventually(() => detailOf(callId), (body) => body.transcript?.some((turn: { text: string }) => turn.text.includes('arrives tomorrow')), 20_000);
    await call.hangup();

    const request = business.received[businessBefore]!;
    expect(toolSignatureIsValid(toolSecret, request.headers, request.bodyText)).toBe(true);
    expect(JSON.parse(request.bodyText)).toMatchObject({ tool: 'lookup_order', arguments: { orderId: '4567' }, call: { id: callId, agentId, callerNumber: '+15550104567' } });
    expect(detail.toolInvocations).toEqual([
      expect.objectContaining({ toolCallId: 'call_lookup_1', name: 'lookup_order', arguments: { orderId: '4567' }, result: { orderId: '4567', status: 'shipped', eta: 'tomorrow' }, error: null }),
    ]);
    expect(detail.toolInvocations[0].latencyMs).toBeGreaterThanOrEqual(1300);
    expect(detail.transcript.map((turn: { source: string; text: string }) => [turn.source, turn.text])).toEqual(
      expect.arrayContaining([
        ['tool_filler', 'Let me look that up.'],
        ['speech', 'Your order 4567 has shipped and arrives tomorrow.'],
      ]),
    );
    const followUp = openai.requestsTo('chat').find((chatRequest) => chatMessages(chatRequest).some((message) => message.role === 'tool'))!;
    const toolMessage = chatMessages(followUp).find((message) => message.role === 'tool')!;
    expect(JSON.parse(toolMessage.content!)).toEqual({ result: { orderId: '4567', status: 'shipped', eta: 'tomorrow' } });
  }, 40_000);

  it('barge-in: caller speech clears the playback and the history keeps only what the caller heard', async () => {
    const longAnswer = 'Our store opens at nine in the morning on weekdays. On weekends we open at ten and close at four. Holidays have their own hours posted online.';
    transcript = 'What are your opening hours?';
    chat = (request) => (lastUserMessage(request).startsWith('Wait') ? { text: ['Sure, go ahead.'] } : { text: [longAnswer] });
    const { number } = await bindAgent(server, { engine: 'pipeline', config: { ...engines(), interruptions: { enabled: true, minSpeechMs: 300 } } });
    const chatBefore = openai.requestsTo('chat').length;
    const { call, callId } = await dialAgent(server, number);
    // Listening before speaking: the reply may start before the trailing silence has been sent.
    const firstReplyFrame = call.waitForMessage((message) => message.event === 'media', 20_000);
    await call.streamAudio(speechFixture('hours'), { trailingSilenceMs: 200 });
    await firstReplyFrame;
    // Let about 1.5 s of the answer play, then talk over it.
    await eventually(async () => framesReceived(call), (frames) => frames >= 75, 10_000);
    transcript = 'Wait, stop. I have a different question.';
    const cleared = call.waitForMessage((message) => message.event === 'clear', 10_000);
    await call.streamAudio(speechFixture('interrupt'), { trailingSilenceMs: 200 });
    await cleared;
    const detail = await eventually(() => detailOf(callId), (body) => body.transcript?.some((turn: { text: string }) => turn.text === 'Sure, go ahead.'), 15_000);
    await call.hangup();

    const cut = detail.transcript.find((turn: { interrupted: boolean }) => turn.interrupted);
    expect(cut).toMatchObject({ role: 'assistant', text: longAnswer, interrupted: true });
    expect(cut.heardText.length).toBeGreaterThan(0);
    expect(cut.heardText.length).toBeLessThan(longAnswer.length);
    expect(longAnswer.startsWith(cut.heardText)).toBe(true);
    expect(detail.events.some((event: { type: string }) => event.type === 'barge_in')).toBe(true);
    const afterBargeIn = openai.requestsTo('chat').slice(chatBefore).find((request) => lastUserMessage(request).startsWith('Wait'))!;
    const assistant = chatMessages(afterBargeIn).filter((message) => message.role === 'assistant');
    expect(assistant.at(-1)!.content).toBe(cut.heardText);
  }, 40_000);

  it('transfers the call to an allowed number through Twilio and records it', async () => {
    transcript = 'Please transfer me to someone in billing.';
    chat = () => ({ toolCalls: [{ id: 'call_transfer_1', name: 'transfer_call', arguments: JSON.stringify({ destination: '+15551230000' }) }] });
    const { number } = await bindAgent(server, {
      engine: 'pipeline',
      config: { ...engines(), tools: [{ type: 'transfer_call', destinations: [{ number: '+15551230000', label: 'billing' }], message: 'Transferring you to billing now.' }] },
    });
    const { call, callId } = await dialAgent(server, number);
    await call.streamAudio(speechFixture('transfer'), { trailingSilenceMs: 200 });
    const closed = await call.closed;
    expect(closed.closedBy).toBe('server');
    const detail = await eventually(() => detailOf(callId), (body) => body.endReason === 'transferred', 10_000);
    const update = twilioRest.requestsFor('update_call').find((request) => request.path.includes(call.parties.callSid))!;
    expect(update.form['Twiml']).toContain('<Dial>+15551230000</Dial>');
    expect(detail.events.some((event: { type: string; payload: { to?: string } }) => event.type === 'call_transferred' && event.payload.to === '+15551230000')).toBe(true);
    expect(detail.transcript.some((turn: { text: string }) => turn.text === 'Transferring you to billing now.')).toBe(true);
  }, 40_000);

  it('passes keypad digits to the model as user input', async () => {
    chat = () => ({ text: ['Thanks, account 123 found.'] });
    const { number } = await bindAgent(server, { engine: 'pipeline', config: engines() });
    const chatBefore = openai.requestsTo('chat').length;
    const { call, callId } = await dialAgent(server, number);
    for (const digit of ['1', '2', '3', '#']) call.sendDtmf(digit);
    const detail = await eventually(() => detailOf(callId), (body) => body.transcript?.length >= 2, 10_000);
    await call.hangup();
    expect(lastUserMessage(openai.requestsTo('chat')[chatBefore]!)).toBe('The caller pressed 1 2 3 #');
    expect(detail.transcript[0]).toMatchObject({ role: 'user', source: 'dtmf', text: 'The caller pressed 1 2 3 #' });
  }, 30_000);

  it('prompts a silent caller, then says goodbye and hangs up (idle timeout)', async () => {
    const { number } = await bindAgent(server, { engine: 'pipeline', config: { ...engines(), idle: { promptAfterMs: 1000, maxPrompts: 1, prompt: 'Are you still there?', goodbye: 'Goodbye for now.' } } });
    const { call, callId } = await dialAgent(server, number);
    await call.closed;
    const detail = await eventually(() => detailOf(callId), (body) => body.endReason === 'idle_timeout', 10_000);
    expect(detail.transcript.map((turn: { source: string; text: string }) => [turn.source, turn.text])).toEqual([
      ['idle_prompt', 'Are you still there?'],
      ['closing', 'Goodbye for now.'],
    ]);
    const hangup = twilioRest.requestsFor('update_call').find((request) => request.path.includes(call.parties.callSid));
    expect(hangup?.form['Status']).toBe('completed');
  }, 30_000);

  it('ends the call at its maximum duration with the closing message', async () => {
    const { number } = await bindAgent(server, { engine: 'pipeline', config: { ...engines(), maxDurationS: 2, maxDurationMessage: 'Time is up, goodbye.' } });
    const { call, callId } = await dialAgent(server, number);
    await call.closed;
    const detail = await eventually(() => detailOf(callId), (body) => body.endReason === 'max_duration', 10_000);
    expect(detail.transcript.at(-1)).toMatchObject({ source: 'closing', text: 'Time is up, goodbye.' });
    expect(detail.events.some((event: { type: string }) => event.type === 'max_duration_reached')).toBe(true);
  }, 30_000);

  it('apologises when the model fails mid-answer, and the call record says why', async () => {
    transcript = 'What time do you open tomorrow morning?';
    chat = () => ({ text: ['We open', ' at nine', ' in the morning', ' every day.'], chunkDelayMs: 20 });
    const { number } = await bindAgent(server, { engine: 'pipeline', config: { ...engines(), apologyMessage: 'Sorry, something went wrong on my side.' } });
    openai.failNext('chat', { kind: 'reset', afterChunks: 2 });
    const { call, callId } = await dialAgent(server, number);
    await call.streamAudio(speechFixture('hours'), { trailingSilenceMs: 200 });
    const detail = await eventually(() => detailOf(callId), (body) => body.transcript?.some((turn: { source: string }) => turn.source === 'apology'), 15_000);
    await call.hangup();
    expect(detail.transcript.find((turn: { source: string }) => turn.source === 'apology')).toMatchObject({ role: 'assistant', text: 'Sorry, something went wrong on my side.' });
    const failure = detail.events.find((event: { type: string }) => event.type === 'llm_error');
    expect(failure?.payload).toMatchObject({ engine: expect.any(String), code: expect.any(String), message: expect.any(String) });
    expect(openai.requestsTo('speech').some((request) => (request.json as { input: string }).input === 'Sorry, something went wrong on my side.')).toBe(true);
  }, 30_000);
});

