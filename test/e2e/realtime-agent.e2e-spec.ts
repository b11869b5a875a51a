import { type SimulatedTwilioCall, waitForEvent } from '@switchboard/simulated-caller';
import { FakeBusinessEndpoint, type FakeRealtimeConnection, FakeRealtimeServer, type FakeResponseScript, FakeTwilioRestServer } from '@switchboard/testing';
import { bindAgent, dialAgent, speechFixture } from '../support/conversation-agents';
import { storeSecret, storeSigningSecret } from '../support/secrets';
import { toolSignatureIsValid } from '../support/tool-signature';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

/**
 * The realtime (speech-to-speech) agent end to end: a simulated Twilio caller talks to the running
 * server, which streams the call's mu-law to a local fake of the OpenAI Realtime WebSocket API and
 * plays back what the fake "model" says. The fake is scripted: it decides when the model's own
 * VAD says the caller starts and stops talking, what the model answers, and which functions it
 * calls, so every step of a scenario is driven by an event rather than by waiting and hoping.
 * Barge-in is not the model's call: the server judges it from the caller's audio with its own
 * (real Silero) VAD, so those scenarios are driven by recorded speech the caller streams.
 * Assertions read what a user would see: the audio and messages on the call, the events the model
 * received, the business and Twilio requests, and GET /v1/calls/:id.
 */

/**
 * The agents run in the default organization (bindAgent); their secrets are in its vault, under
 * names of this file's own (other spec files store theirs in the same vault at the same time).
 */
const TOOL_SECRET_NAME = 'realtime-agent-lookup-signing';
const API_KEY_SECRET = 'realtime-agent-openai-key';
const FAKE_API_KEY = 'sk-fake-realtime-e2e';
/** The model's audio comes in chunks of awkward sizes, never whole 20 ms frames (160 bytes). */
const ODD_CHUNK_BYTES = [1, 161, 1234, 4801];
/** 20 ms of 8 kHz mu-law: Twilio plays whole frames of this size. */
const FRAME_BYTES = 160;

function concat(chunks: readonly Uint8Array[]): Buffer {
  return Buffer.concat(chunks.map((chunk) => Buffer.from(chunk)));
}

/**
 * `tenths` x 100 ms of model audio plus `seed` bytes (so it does not end on a frame boundary), cut
 * into ODD_CHUNK_BYTES in turn. The bytes are pseudo-random per seed, so any stretch of one script's
 * audio is found nowhere else, and every mu-law code occurs (0x7F, "negative zero", included).
 */
function modelAudio(tenths: number, seed: number): Uint8Array[] {
  let state = seed;
  const bytes = Uint8Array.from({ length: tenths * 800 + seed }, () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state >>> 24;
  });
  const chunks: Uint8Array[] = [];
  for (let offset = 0, i = 0; offset < bytes.length; i += 1) {
    const size = ODD_CHUNK_BYTES[i % ODD_CHUNK_BYTES.length]!;
    chunks.push(bytes.subarray(offset, offset + size));
    offset += size;
  }
  return chunks;
}

/**
 * What the caller must receive for one whole utterance: the model's bytes exactly as it sent them,
 * then silence (0xFF) completing the last 20 ms frame. Nothing inside it: no padding at chunk or
 * mark boundaries, no decoding and re-encoding.
 */
function asOneUtterance(chunks: readonly Uint8Array[]): Buffer {
  const audio = concat(chunks);
  return Buffer.concat([audio, Buffer.alloc((FRAME_BYTES - (audio.length % FRAME_BYTES)) % FRAME_BYTES, 0xff)]);
}

/** Sentences of `words` five-letter words: one word per 100 ms of audio, so heard text tracks heard audio. */
function fiveLetterWords(words: number): string {
  const vocabulary = ['hours', 'store', 'opens', 'early', 'every', 'today', 'until', 'seven', 'after', 'lunch'];
  return Array.from({ length: words }, (_, i) => vocabulary[i % vocabulary.length]).join(' ');
}

/** Played mark echoes the caller has sent so far. */
function playedMarks(call: SimulatedTwilioCall): number {
  return call.marksEchoed.filter((echo) => echo.reason === 'played').length;
}

/** Resolves once the caller has echoed `count` marks as played (the agent audio before them was heard). */
function marksPlayed(call: SimulatedTwilioCall, count: number): Promise<unknown> {
  if (playedMarks(call) >= count) return Promise.resolve();
  return waitForEvent(call, 'markEchoed', () => playedMarks(call) >= count, 10_000);
}

interface Transcript {
  index: number;
  role: string;
  source: string;
  text: string;
  heardText: string | null;
  interrupted: boolean;
}

describe('realtime agent over a simulated Twilio call (e2e)', () => {
  let server: TestServer;
  let model: FakeRealtimeServer;
  let twilioRest: FakeTwilioRestServer;
  let business: FakeBusinessEndpoint;
  /** The tool's Standard Webhooks signing secret (whsec_...), as stored in the vault. */
  let toolSecret: string;

  const realtime = () => ({ url: model.baseUrl, model: 'gpt-realtime-e2e', apiKeySecret: API_KEY_SECRET, voice: 'marin', turnDetection: 'server_vad' });

  beforeAll(async () => {
    model = new FakeRealtimeServer({ apiKey: FAKE_API_KEY });
    await model.start();
    twilioRest = await FakeTwilioRestServer.start({ acceptUnknownCalls: true });
    business = await FakeBusinessEndpoint.start();
    business.reply = (request) => {
      const { arguments: args } = JSON.parse(request.bodyText) as { arguments: { orderId: string } };
      return { status: 200, body: JSON.stringify({ orderId: args.orderId, status: 'shipped', eta: 'tomorrow' }), contentType: 'application/json', delayMs: 300 };
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
    await Promise.all([model?.stop(), twilioRest?.close(), business?.close()]);
  });

  const detailOf = async (callId: string) => (await server.api(`/v1/calls/${callId}`)).body;

  /** What the model bills for its answer, in the provider's `response.done` shape. */
  const ANSWER_USAGE = {
    total_tokens: 230,
    input_tokens: 150,
    output_tokens: 80,
    input_token_details: { text_tokens: 100, audio_tokens: 50, image_tokens: 0, cached_tokens: 30, cached_tokens_details: { text_tokens: 20, audio_tokens: 10, image_tokens: 0 } },
    output_token_details: { text_tokens: 25, audio_tokens: 55 },
  };

  /**
   * Dials the agent and returns the model-side connection it opens. `prepare` runs as soon as the
   * connection exists, before the client can send anything, so scripted responses are queued in
   * time for the session's first `response.create` (the greeting).
   */
  async function dialRealtime(number: string, options: { from?: string; prepare?: (connection: FakeRealtimeConnection) => void } = {}) {
    const connecting = model.nextConnection(15_000).then((connection) => {
      options.prepare?.(connection);
      return connection;
    });
    const { call, callId } = await dialAgent(server, number, options.from);
    const connection = await connecting;
    // The session forwards caller audio once it is wired to the model: the first append says "ready".
    await connection.waitForEvent('input_audio_buffer.append', () => true, 10_000);
    return { call, callId, connection };
  }

  it('greets with the first message: the model is asked to say it, and its audio reaches the caller byte for byte', async () => {
    const greetingAudio = modelAudio(8, 1);
    const greetingText = 'Hello +15550102030, thanks for calling Acme.';
    const { number } = await bindAgent(server, {
      engine: 'realtime',
      config: { realtime: realtime(), systemPrompt: 'You are Acme support. The caller is {{caller.number}}.', firstMessage: 'Hello {{caller.number}}, thanks for calling Acme.' },
    });
    const { call, callId, connection } = await dialRealtime(number, {
      from: '+15550102030',
      prepare: (fake) => fake.responseQueue.push({ audioChunks: greetingAudio, transcript: greetingText }),
    });
    const request = await connection.waitForEvent('response.create');
    const detail = await eventually(() => detailOf(callId), (body) => body.transcript?.length >= 1, 10_000);
    await call.hangup();

    expect(request.response?.instructions).toContain('"Hello +15550102030, thanks for calling Acme."');
    expect(connection.session).toMatchObject({
      type: 'realtime',
      instructions: 'You are Acme support. The caller is +15550102030.',
      audio: {
        // The model answers when the caller stops, but never cuts itself off: barge-in is the platform's call.
        input: { format: { type: 'audio/pcmu' }, turn_detection: { type: 'server_vad', create_response: true, interrupt_response: false } },
        output: { format: { type: 'audio/pcmu' }, voice: 'marin' },
      },
    });
    expect(model.upgrades.at(-1)).toMatchObject({ model: 'gpt-realtime-e2e', authorized: true });
    // Every byte the model spoke, in order, 0x7F included, and nothing else but the last frame's padding.
    expect(concat(greetingAudio).includes(0x7f)).toBe(true);
    expect(Buffer.from(call.result().receivedMulaw).equals(asOneUtterance(greetingAudio))).toBe(true);
    expect(detail.transcript).toEqual([expect.objectContaining({ index: 0, role: 'assistant', source: 'first_message', text: greetingText, interrupted: false, heardText: null })]);
  }, 30_000);

  it("passes the caller's audio to the model unchanged, records the turn and its latency waterfall", async () => {
    const answerAudio = modelAudio(6, 2);
    const { number } = await bindAgent(server, { engine: 'realtime', config: { realtime: realtime() } });
    const { call, callId, connection } = await dialRealtime(number);
    // The caller's bytes reach the model as they are: every mu-law code, 0x7F included, after the question.
    const spoken = new Uint8Array(Buffer.concat([speechFixture('hours'), Buffer.from(Array.from({ length: 256 }, (_, code) => code))]));
    await call.streamAudio(spoken, { trailingSilenceMs: 0 });
    await connection.waitForEvent('input_audio_buffer.append', () => connection.appendedAudio.includes(Buffer.from(spoken)), 10_000);

    // The model's VAD heard the question; it reports the end of speech once its silence window has
    // passed, as a position 500 ms behind the audio it has; then it transcribes the caller and answers.
    const question = connection.speechStarted(undefined, Math.round(connection.appendedAudioMs - spoken.length / 8));
    connection.speechStopped(question, Math.round(connection.appendedAudioMs) - 500);
    connection.userTranscript(question, 'What time do you open tomorrow morning?');
    await connection.respond({ audioChunks: answerAudio, transcript: 'We open at nine.', usage: ANSWER_USAGE });
    const detail = await eventually(() => detailOf(callId), (body) => body.transcript?.length >= 2 && body.latency?.length >= 1, 10_000);
    await call.hangup();

    // The cost ledger: the tokens the model reported, priced with the deployment default catalog
    // (per 1M tokens: text in $4, audio in $32, cached $0.40, text out $16, audio out $64).
    const cost = await eventually(async () => (await server.api(`/v1/calls/${callId}/cost`)).body, (body) => body.status === 'priced', 10_000);
    expect(cost.meters).toMatchObject({
      engine: 'realtime',
      realtimeTextInputTokens: 100,
      realtimeAudioInputTokens: 50,
      realtimeCachedTextInputTokens: 20,
      realtimeCachedAudioInputTokens: 10,
      realtimeTextOutputTokens: 25,
      realtimeAudioOutputTokens: 55,
      agentAudioSentMs: call.result().receivedMulaw.length / 8,
    });
    expect(cost.meters.agentAudioHeardMs).toBeGreaterThan(0);
    expect(cost.meters.agentAudioHeardMs).toBeLessThanOrEqual(cost.meters.agentAudioSentMs);
    const realtimeLines = cost.lines
      .filter((line: { component: string }) => line.component.startsWith('realtime_'))
      .map((line: { component: string; quantity: number; amountMicros: number }) => [line.component, line.quantity, line.amountMicros]);
    expect(realtimeLines).toEqual([
      ['realtime_text_input', 80, 320], // (100 - 20 cached) x 4 000 000 / 1M
      ['realtime_audio_input', 40, 1_280], // (50 - 10 cached) x 32 000 000 / 1M
      ['realtime_cached_input', 30, 12], // 30 x 400 000 / 1M
      ['realtime_text_output', 25, 400], // 25 x 16 000 000 / 1M
      ['realtime_audio_output', 55, 3_520], // 55 x 64 000 000 / 1M
    ]);

    expect(detail.transcript.map((turn: Transcript) => [turn.role, turn.source, turn.text])).toEqual([
      ['user', 'speech', 'What time do you open tomorrow morning?'],
      ['assistant', 'speech', 'We open at nine.'],
    ]);
    expect(Buffer.from(call.result().receivedMulaw).equals(asOneUtterance(answerAudio))).toBe(true);
    const waterfall = detail.latency.find((row: { turnIndex: number }) => row.turnIndex === 1);
    for (const step of ['endOfSpeechMs', 'endOfTurnMs', 'llmFirstTokenMs', 'ttsFirstByteMs', 'firstFrameSentMs', 'firstMarkEchoedMs']) {
      expect(waterfall[step]).toEqual(expect.any(Number));
    }
    expect(waterfall.asrFinalMs).toBeNull();
    // End of speech is when the caller stopped, not when the model's VAD said so after its silence window.
    expect(waterfall.endOfTurnMs - waterfall.endOfSpeechMs).toBeGreaterThanOrEqual(490);
    expect(waterfall.endOfTurnMs - waterfall.endOfSpeechMs).toBeLessThan(2000);
    expect(waterfall.endOfTurnMs).toBeLessThanOrEqual(waterfall.firstFrameSentMs);
    expect(waterfall.endOfSpeechMs).toBeLessThanOrEqual(waterfall.firstFrameSentMs);
    expect(waterfall.firstFrameSentMs).toBeLessThanOrEqual(waterfall.firstMarkEchoedMs);
    expect(waterfall.voiceToVoiceMs).toEqual(expect.any(Number));
  }, 30_000);

  it("barge-in: the caller's speech past minSpeechMs (heard by the server's own VAD) clears the call, cancels and truncates the response at what was heard", async () => {
    const words = 30;
    const longText = fiveLetterWords(words);
    const long: FakeResponseScript = {
      audioChunks: modelAudio(words, 3),
      transcript: longText,
      // About real time (775 ms of audio every 600 ms): still being generated when the caller talks over it.
      chunkIntervalMs: 150,
      // Audio the server had in flight when the cancel arrived: it must never reach the caller.
      lateChunksAfterCancel: modelAudio(3, 4),
    };
    const { number } = await bindAgent(server, { engine: 'realtime', config: { realtime: realtime(), interruptions: { enabled: true, minSpeechMs: 300 } } });
    const { call, callId, connection } = await dialRealtime(number);
    const answered = connection.playTurn(long, 'What are your opening hours?');
    // About a second of the answer has played at the caller (marks go out every 250 ms of audio).
    await marksPlayed(call, 3);

    const cleared = call.waitForMessage((message) => message.event === 'clear', 10_000);
    // The caller talks over the answer ("Wait, stop. I have a different question.", 2.5 s of
    // speech): the model's VAD says nothing yet, the server's own VAD hears it and yields.
    const talking = call.streamAudio(speechFixture('interrupt'), { trailingSilenceMs: 0 });
    let talkingDone = false;
    void talking.then(() => (talkingDone = true));
    await cleared;
    const stillTalkingAtClear = !talkingDone;
    const atClear = call.result();
    const truncate = await connection.waitForEvent('conversation.item.truncate', () => true, 5_000);
    const cancel = await connection.waitForEvent('response.cancel', () => true, 5_000);
    const outcome = await answered;
    await talking;
    // Then the model's VAD reports the caller's turn, as the real server does after its silence window.
    const speech = connection.speechStarted();
    connection.speechStopped(speech);
    connection.userTranscript(speech, 'Wait, stop. I have a different question.');
    await connection.respond({ audioChunks: modelAudio(3, 5), transcript: 'Sure, go ahead.' });
    const detail = await eventually(() => detailOf(callId), (body) => body.transcript?.some((turn: Transcript) => turn.text === 'Sure, go ahead.'), 10_000);
    await call.hangup();

    expect(outcome.status).toBe('cancelled');
    expect(outcome.lateChunksSent).toBe(long.lateChunksAfterCancel!.length);
    expect(cancel.response_id).toBe(outcome.responseId);
    // What the caller had played of the answer when the clear arrived (sent minus discarded).
    const playedMs = (atClear.receivedMulaw.length - atClear.latency.bytesCleared) / 8;
    expect(truncate).toMatchObject({ item_id: outcome.itemId, content_index: 0 });
    expect(truncate.audio_end_ms).toBeGreaterThan(0);
    expect(truncate.audio_end_ms).toBeLessThanOrEqual(playedMs);
    // Heard is known from mark echoes, one every 250 ms of audio.
    expect(truncate.audio_end_ms).toBeGreaterThanOrEqual(playedMs - 450);
    // The cancelled response's late audio was dropped before it reached the phone (every chunk long enough to tell).
    const received = Buffer.from(call.result().receivedMulaw);
    expect(long.lateChunksAfterCancel!.filter((chunk) => chunk.length >= FRAME_BYTES).some((chunk) => received.includes(Buffer.from(chunk)))).toBe(false);
    expect(atClear.latency.clears).toBe(1);

    const cut = detail.transcript.find((turn: Transcript) => turn.interrupted);
    expect(cut).toMatchObject({ role: 'assistant', source: 'speech', interrupted: true });
    expect(longText.startsWith(cut.text)).toBe(true);
    expect(cut.heardText.length).toBeGreaterThan(0);
    expect(cut.heardText.length).toBeLessThan(cut.text.length);
    expect(cut.text.startsWith(cut.heardText)).toBe(true);
    // One word per 100 ms of audio: the heard words match the heard audio.
    expect(Math.abs(cut.heardText.split(' ').length - truncate.audio_end_ms / 100)).toBeLessThanOrEqual(2);
    expect(detail.transcript.map((turn: Transcript) => [turn.role, turn.text]).slice(-2)).toEqual([
      ['user', 'Wait, stop. I have a different question.'],
      ['assistant', 'Sure, go ahead.'],
    ]);
    const bargeIn = detail.events.find((event: { type: string }) => event.type === 'barge_in');
    expect(bargeIn?.payload).toMatchObject({ cause: 'speech', itemId: outcome.itemId });
    expect(Math.abs(bargeIn.payload.heardMs - truncate.audio_end_ms)).toBeLessThanOrEqual(1);
    // Decided from the caller's audio while they were still talking, not from the model's events.
    expect(stillTalkingAtClear).toBe(true);
    const { speechStartMs, decisionFrameMs, clearedAtMs } = bargeIn.payload;
    expect(speechStartMs).toEqual(expect.any(Number));
    expect(decisionFrameMs).toBeGreaterThan(speechStartMs);
    expect(clearedAtMs).toBeGreaterThanOrEqual(decisionFrameMs);
    expect(detail.events.some((event: { type: string }) => event.type === 'local_vad_unavailable')).toBe(false);
  }, 40_000);

  it('a short word under minSpeechMs is a backchannel: the answer plays on, nothing is cancelled', async () => {
    const text = fiveLetterWords(20);
    const audio = modelAudio(20, 6);
    const { number } = await bindAgent(server, { engine: 'realtime', config: { realtime: realtime(), interruptions: { enabled: true, minSpeechMs: 500 } } });
    const { call, callId, connection } = await dialRealtime(number);
    const answered = connection.playTurn({ audioChunks: audio, transcript: text, chunkIntervalMs: 100 }, 'Tell me about your hours.');
    await marksPlayed(call, 2);
    // The caller says just "Wait" over the answer (the fixture's first 650 ms: about 250 ms of
    // speech). The model's VAD hears it too, but reports its end only after its silence window, well
    // past minSpeechMs: only the server's own VAD can tell this was a backchannel.
    const blip = connection.speechStarted();
    await call.streamAudio(speechFixture('interrupt').subarray(0, 650 * 8), { trailingSilenceMs: 700 });
    connection.speechStopped(blip);
    await answered;
    const detail = await eventually(() => detailOf(callId), (body) => body.transcript?.some((turn: Transcript) => turn.role === 'assistant'), 10_000);
    await call.hangup();

    // The answer is recorded once its last mark came back played, so it all played: no clear ever came.
    expect(detail.transcript.find((turn: Transcript) => turn.role === 'assistant')).toMatchObject({ text, interrupted: false, heardText: null });
    const result = call.result();
    expect(result.latency.clears).toBe(0);
    expect(result.latency.bytesCleared).toBe(0);
    expect(Buffer.from(result.receivedMulaw).equals(asOneUtterance(audio))).toBe(true);
    expect(connection.receivedOfType('response.cancel')).toHaveLength(0);
    expect(connection.truncations).toHaveLength(0);
    const backchannel = detail.events.find((event: { type: string }) => event.type === 'backchannel_ignored');
    expect(backchannel?.payload).toMatchObject({ judgedBy: 'local_vad' });
    expect(backchannel.payload.speechMs).toBeGreaterThan(0);
    expect(backchannel.payload.speechMs).toBeLessThan(500);
    expect(detail.events.some((event: { type: string }) => event.type === 'barge_in')).toBe(false);
  }, 30_000);

  it('runs a business tool the model calls: signed request, result back to the model, invocation recorded', async () => {
    const answer = 'Your order 4567 has shipped and arrives tomorrow.';
    const { number, agentId } = await bindAgent(server, {
      engine: 'realtime',
      config: {
        realtime: realtime(),
        tools: [
          {
            type: 'webhook',
            name: 'lookup_order',
            description: 'Looks up an order by its number.',
            parameters: { type: 'object', properties: { orderId: { type: 'string', pattern: '^[0-9]+$' } }, required: ['orderId'], additionalProperties: false },
            url: business.url('/tools/lookup'),
            signingSecret: TOOL_SECRET_NAME,
          },
        ],
      },
    });
    const businessBefore = business.received.length;
    const { call, callId, connection } = await dialRealtime(number, { from: '+15550104567' });
    // After the tool result the model answers with this.
    connection.responseQueue.push({ audioChunks: modelAudio(5, 7), transcript: answer });
    await connection.playTurn({ functionCall: { name: 'lookup_order', arguments: JSON.stringify({ orderId: '4567' }), callId: 'call_lookup_1' } }, 'Where is my order 4567?');
    const output = await connection.waitForEvent('conversation.item.create', (event) => event.item?.type === 'function_call_output', 10_000);
    const followUp = await connection.waitForEvent('response.create', () => true, 5_000);
    const detail = await eventually(() => detailOf(callId), (body) => body.transcript?.some((turn: Transcript) => turn.text === answer) && body.toolInvocations?.length === 1, 10_000);
    await call.hangup();

    expect(connection.session.tools).toEqual([expect.objectContaining({ type: 'function', name: 'lookup_order', parameters: expect.objectContaining({ required: ['orderId'] }) })]);
    const request = business.received[businessBefore]!;
    expect(toolSignatureIsValid(toolSecret, request.headers, request.bodyText)).toBe(true);
    expect(JSON.parse(request.bodyText)).toMatchObject({ tool: 'lookup_order', arguments: { orderId: '4567' }, call: { id: callId, agentId, callerNumber: '+15550104567' } });
    expect(output.item.call_id).toBe('call_lookup_1');
    expect(JSON.parse(output.item.output)).toEqual({ result: { orderId: '4567', status: 'shipped', eta: 'tomorrow' } });
    // The model is asked to go on only once it has the result.
    expect(connection.received.indexOf(followUp)).toBeGreaterThan(connection.received.indexOf(output));
    expect(detail.toolInvocations).toEqual([
      expect.objectContaining({ toolCallId: 'call_lookup_1', name: 'lookup_order', arguments: { orderId: '4567' }, result: { orderId: '4567', status: 'shipped', eta: 'tomorrow' }, error: null }),
    ]);
    expect(detail.toolInvocations[0].latencyMs).toBeGreaterThanOrEqual(300);
    expect(detail.transcript.map((turn: Transcript) => [turn.role, turn.text])).toEqual([
      ['user', 'Where is my order 4567?'],
      ['assistant', answer],
    ]);
  }, 30_000);

  /** Dials an agent with the end_call tool; the model calls it in `toolResponse` and says `later` after the result. */
  async function endCallScenario(toolResponse: FakeResponseScript, later: FakeResponseScript[]) {
    const { number } = await bindAgent(server, { engine: 'realtime', config: { realtime: realtime(), tools: [{ type: 'end_call', goodbye: 'Thank you for calling. Goodbye.' }] } });
    const { call, callId, connection } = await dialRealtime(number);
    connection.responseQueue.push(...later);
    void connection.playTurn(toolResponse, 'No, that is all. Bye.');
    const closed = await call.closed;
    const detail = await eventually(() => detailOf(callId), (body) => body.endReason === 'agent_hangup', 10_000);
    const hangup = twilioRest.requestsFor('update_call').find((request) => request.path.includes(call.parties.callSid));
    return { call, connection, closed, detail, hangup };
  }

  const endCall = (callId?: string): FakeResponseScript['functionCall'] => ({ name: 'end_call', arguments: '{"reason":"caller is done"}', ...(callId && { callId }) });

  it('end_call: the closing words after the tool result play in full, then Twilio hangs up the call', async () => {
    const goodbye = { audioChunks: modelAudio(10, 8), transcript: 'Thanks for calling Acme. Goodbye!' };
    const { call, closed, detail, hangup } = await endCallScenario({ functionCall: endCall('call_end_1') }, [goodbye]);

    expect(closed.closedBy).toBe('server');
    // The caller heard every byte of the goodbye before the line went dead.
    expect(Buffer.from(call.result().playedMulaw).includes(concat(goodbye.audioChunks))).toBe(true);
    expect(hangup?.form['Status']).toBe('completed');
    expect(detail.toolInvocations).toEqual([expect.objectContaining({ toolCallId: 'call_end_1', name: 'end_call', arguments: { reason: 'caller is done' }, result: { ending: true, reason: 'caller is done' } })]);
    expect(detail.transcript.at(-1)).toMatchObject({ role: 'assistant', source: 'speech', text: goodbye.transcript, interrupted: false });
    // Hung up because the goodbye had played, not because a timeout gave up waiting for it.
    expect(detail.events.some((event: { type: string }) => event.type === 'closing_words_timeout')).toBe(false);
  }, 30_000);

  it('end_call in the same response as the closing words: hangs up once they have played', async () => {
    const goodbye = { audioChunks: modelAudio(10, 13), transcript: 'Have a great day. Goodbye!' };
    // As the tool's description asks, the model says goodbye and calls end_call in one response;
    // after the tool result it has nothing more to say (an empty response).
    const { call, closed, detail, hangup } = await endCallScenario({ ...goodbye, functionCall: endCall() }, [{}]);

    expect(closed.closedBy).toBe('server');
    expect(Buffer.from(call.result().playedMulaw).includes(concat(goodbye.audioChunks))).toBe(true);
    expect(hangup?.form['Status']).toBe('completed');
    expect(detail.transcript.at(-1)).toMatchObject({ role: 'assistant', text: goodbye.transcript, interrupted: false });
    expect(detail.events.some((event: { type: string }) => event.type === 'closing_words_timeout')).toBe(false);
  }, 30_000);

  it('end_call without a word from the model: the configured goodbye is said, then the call ends', async () => {
    const goodbye = { audioChunks: modelAudio(6, 14), transcript: 'Thank you for calling. Goodbye.' };
    // The model calls end_call silently and stays silent after the result; then it is asked for the goodbye.
    const { call, connection, detail, hangup } = await endCallScenario({ functionCall: endCall() }, [{}, goodbye]);

    const asked = connection.receivedOfType('response.create').map((event) => event.response?.instructions);
    expect(asked.at(-1)).toContain('"Thank you for calling. Goodbye."');
    expect(Buffer.from(call.result().playedMulaw).includes(concat(goodbye.audioChunks))).toBe(true);
    expect(hangup?.form['Status']).toBe('completed');
    expect(detail.transcript.at(-1)).toMatchObject({ role: 'assistant', source: 'closing', text: goodbye.transcript });
  }, 30_000);

  it('keypad: digits up to # reach the model as one input, in words, and the transcript', async () => {
    const answer = { audioChunks: modelAudio(3, 12), transcript: 'Thanks, account 123 found.' };
    const { number } = await bindAgent(server, { engine: 'realtime', config: { realtime: realtime(), systemPrompt: 'You are Acme support.' } });
    const { call, callId, connection } = await dialRealtime(number);
    connection.responseQueue.push(answer);
    for (const digit of ['1', '2', '3', '#']) call.sendDtmf(digit);
    const request = await connection.waitForEvent('response.create', () => true, 5_000);
    const detail = await eventually(() => detailOf(callId), (body) => body.transcript?.length >= 2, 10_000);
    await call.hangup();

    expect(connection.receivedOfType('response.create')).toHaveLength(1);
    expect(request.response?.instructions).toContain('The caller pressed 1 2 3 #');
    // Instructions given with a response replace the session's: the agent's own prompt goes along.
    expect(request.response?.instructions).toContain('You are Acme support.');
    expect(detail.transcript.map((turn: Transcript) => [turn.role, turn.source, turn.text])).toEqual([
      ['user', 'dtmf', 'The caller pressed 1 2 3 #'],
      ['assistant', 'speech', answer.transcript],
    ]);
  }, 30_000);

  it('idle: prompts a silent caller, then says goodbye and hangs up once it has played', async () => {
    const prompt = { audioChunks: modelAudio(3, 15), transcript: 'Are you still there?' };
    const goodbye = { audioChunks: modelAudio(5, 16), transcript: 'Goodbye for now.' };
    const { number } = await bindAgent(server, {
      engine: 'realtime',
      config: { realtime: realtime(), idle: { promptAfterMs: 1000, maxPrompts: 1, prompt: 'Are you still there?', goodbye: 'Goodbye for now.' } },
    });
    const { call, callId } = await dialRealtime(number, { prepare: (fake) => fake.responseQueue.push(prompt, goodbye) });
    await call.closed;
    const detail = await eventually(() => detailOf(callId), (body) => body.endReason === 'idle_timeout', 10_000);

    expect(detail.transcript.map((turn: Transcript) => [turn.source, turn.text])).toEqual([
      ['idle_prompt', 'Are you still there?'],
      ['closing', 'Goodbye for now.'],
    ]);
    expect(Buffer.from(call.result().playedMulaw).includes(concat(goodbye.audioChunks))).toBe(true);
    expect(twilioRest.requestsFor('update_call').find((request) => request.path.includes(call.parties.callSid))?.form['Status']).toBe('completed');
  }, 30_000);

  it('max duration: cuts the answer in progress, says the closing line in full, then hangs up', async () => {
    // A long answer still being generated when the limit strikes: its cancelled response ends
    // (response.done) before the closing line's does, and must not be taken for it.
    const long = { audioChunks: modelAudio(150, 17), transcript: fiveLetterWords(150), chunkIntervalMs: 40 };
    // Delivered faster than it plays (as a real model does), or the caller's playback would run dry between chunks.
    const closing = { audioChunks: modelAudio(5, 18), transcript: 'Time is up, goodbye.', chunkIntervalMs: 10 };
    const { number } = await bindAgent(server, { engine: 'realtime', config: { realtime: realtime(), maxDurationS: 3, maxDurationMessage: 'Time is up, goodbye.' } });
    const { call, callId, connection } = await dialRealtime(number);
    connection.responseQueue.push(closing);
    void connection.playTurn(long, 'Tell me everything about your store.');
    await call.closed;
    const detail = await eventually(() => detailOf(callId), (body) => body.endReason === 'max_duration', 10_000);

    expect(detail.events.some((event: { type: string }) => event.type === 'max_duration_reached')).toBe(true);
    expect(detail.transcript.at(-1)).toMatchObject({ role: 'assistant', source: 'closing', text: 'Time is up, goodbye.', interrupted: false });
    expect(Buffer.from(call.result().playedMulaw).includes(concat(closing.audioChunks))).toBe(true);
    // 15 s of answer had been sent: it was playing when the limit struck, and was cut.
    expect(detail.transcript.find((turn: Transcript) => turn.interrupted)).toMatchObject({ role: 'assistant', source: 'speech' });
    expect(detail.events.find((event: { type: string }) => event.type === 'barge_in')?.payload).toMatchObject({ cause: 'max_duration' });
    expect(detail.events.some((event: { type: string }) => event.type === 'closing_words_timeout')).toBe(false);
  }, 30_000);
});
