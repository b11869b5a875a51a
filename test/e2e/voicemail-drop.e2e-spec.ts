import { decodeMulaw, sineTone } from '@switchboard/audio';
import { FakeOpenAiServer, FakeTwilioRestServer, type RecordedRequest } from '@switchboard/testing';
import { speechFixture } from '../support/conversation-agents';
import { uniqueE164 } from '../support/database';
import { answeredOutboundCall, postCall, sendAmdResult, setUpLine, type OrganizationLine } from '../support/outbound-calls';
import { storeSecret } from '../support/secrets';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

/**
 * Voicemail drop end to end: outbound calls placed through POST /v1/calls with machineDetection
 * DetectMessageEnd against the real server, Twilio's REST API played by FakeTwilioRestServer, and
 * Twilio's side of the call (TwiML fetch, AMD callback, media stream, mark echoes) by the simulated
 * caller. The agent is a pipeline agent whose voice is the fake OpenAI-compatible TTS: 30 ms of
 * tone per character, so how much of a message the callee received is measurable.
 */

const API_KEY_SECRET = 'voicemail-drop-openai-key';
const FAKE_API_KEY = 'sk-fake-voicemail-e2e';
const MS_PER_CHAR = 30;
/** mu-law at 8 kHz. */
const BYTES_PER_MS = 8;

function speechFor(text: string): Int16Array {
  return sineTone({ frequencyHz: 440, sampleRate: 24_000, durationMs: Math.max(200, text.length * MS_PER_CHAR), amplitudeDbfs: -12 });
}

function rmsDbfs(mulaw: Uint8Array): number {
  const pcm = decodeMulaw(mulaw);
  let sum = 0;
  for (const sample of pcm) sum += sample * sample;
  return 20 * Math.log10(Math.sqrt(sum / Math.max(1, pcm.length)) / 32768);
}

const ttsInputs = (requests: RecordedRequest[]) => requests.map((request) => (request.json as { input: string }).input);

describe('voicemail drop (e2e)', () => {
  let server: TestServer;
  let twilioRest: FakeTwilioRestServer;
  let openai: FakeOpenAiServer;
  let line: OrganizationLine;
  let echoLine: OrganizationLine;

  beforeAll(async () => {
    openai = await FakeOpenAiServer.start({
      apiKey: FAKE_API_KEY,
      transcription: () => ({ text: 'What time do you open?' }),
      chat: () => ({ text: ['We open at nine.'] }),
      speech: (request) => ({ pcm: speechFor(String((request.json as { input: string }).input)), chunkBytes: [4800] }),
    });
    twilioRest = await FakeTwilioRestServer.start();
    server = await startTestServer({ TWILIO_ACCOUNT_SID: twilioRest.accountSid, TWILIO_AUTH_TOKEN: twilioRest.authToken, TWILIO_API_BASE_URL: twilioRest.baseUrl });
    await storeSecret(server, API_KEY_SECRET, FAKE_API_KEY);
    const endpoint = { baseUrl: openai.baseUrl, apiKeySecret: API_KEY_SECRET };
    line = await setUpLine(server, server.adminApiKey, {
      engine: 'pipeline',
      config: {
        stt: { provider: 'openai', model: 'whisper-1', ...endpoint },
        llm: { provider: 'openai', model: 'gpt-test', ...endpoint },
        tts: { provider: 'openai', model: 'tts-test', voice: 'alloy', ...endpoint },
        firstMessage: 'Hello {{call.params.name}}, this is Acme calling.',
        voicemail: { message: 'This is Acme. Please call us back.' },
      },
    });
    echoLine = await setUpLine(server, server.adminApiKey, { engine: 'echo' });
  }, 30_000);

  afterAll(async () => {
    await server?.close();
    await Promise.all([twilioRest?.close(), openai?.close()]);
  });

  const detailOf = async (callId: string) => (await server.api(`/v1/calls/${callId}`)).body;
  const typesOf = (detail: { events: { type: string }[] }) => detail.events.map((event) => event.type);
  const place = (body: object) => postCall(server, server.adminApiKey, { agentId: line.agentId, to: uniqueE164(), from: line.number, ...body });

  it('after the beep, says the call\'s own message over the agent\'s voice, waits until it was heard, records it and hangs up', async () => {
    const message = 'Hi {{call.params.name}}, this is Acme about your order. Please call us back on this number. Goodbye.';
    const spoken = 'Hi Ada, this is Acme about your order. Please call us back on this number. Goodbye.';
    const placed = await place({ variables: { name: 'Ada' }, machineDetection: 'DetectMessageEnd', voicemail: { message } });
    expect(placed.status).toBe(201);
    const call = placed.body;
    const callee = answeredOutboundCall(server, call);
    await callee.dial();
    await callee.connectMedia();
    // Asynchronous detection: the agent greets at once (over the machine's own greeting, here).
    await eventually(() => detailOf(call.id), (body) => body.transcript?.some((turn: { source: string }) => turn.source === 'first_message'), 15_000);
    const receivedBefore = callee.result().receivedMulaw.length;
    const speechBefore = openai.requestsTo('speech').length;

    expect((await sendAmdResult(server, call.twilioCallSid, 'machine_end_beep')).status).toBe(204);
    const closed = await callee.closed;
    expect(closed.closedBy).toBe('server');

    // What the callee's line carried after the beep: the message, in the agent's voice, whole.
    const voicemail = callee.result().receivedMulaw.slice(receivedBefore);
    const expectedMs = spoken.length * MS_PER_CHAR;
    expect(voicemail.length / BYTES_PER_MS).toBeGreaterThanOrEqual(expectedMs - 20);
    expect(voicemail.length / BYTES_PER_MS).toBeLessThanOrEqual(expectedMs + 100);
    expect(rmsDbfs(voicemail)).toBeGreaterThan(-20);
    expect(ttsInputs(openai.requestsTo('speech').slice(speechBefore))).toEqual([spoken]);

    // Hung up through Twilio's REST API, after the message played out.
    const hangUp = twilioRest.requestsFor('update_call').find((request) => request.callSid === call.twilioCallSid);
    expect(hangUp).toMatchObject({ status: 200, form: { Status: 'completed' } });
    expect(twilioRest.call(call.twilioCallSid)?.status).toBe('completed');

    const detail = await eventually(() => detailOf(call.id), (body) => body.endReason !== null && typesOf(body).includes('stream_closed'), 10_000);
    expect(detail).toMatchObject({ answeredBy: 'machine_end_beep', endReason: 'voicemail_left' });
    const left = detail.events.find((event: { type: string }) => event.type === 'voicemail_left');
    expect(left.payload).toMatchObject({ answeredBy: 'machine_end_beep', message: spoken, heardInFull: true });
    expect(left.payload.heardMs).toBeGreaterThanOrEqual(expectedMs - 20);
    expect(typesOf(detail)).toEqual(expect.arrayContaining(['amd_result', 'voicemail_started', 'voicemail_left']));
    expect(typesOf(detail).indexOf('voicemail_left')).toBeLessThan(typesOf(detail).indexOf('stream_closed'));
    expect(detail.transcript.map((turn: { role: string; source: string; text: string }) => [turn.role, turn.source, turn.text])).toEqual([
      ['assistant', 'first_message', 'Hello Ada, this is Acme calling.'],
      ['assistant', 'voicemail', spoken],
    ]);
  }, 45_000);

  it('with the verdict in before the stream starts, says the agent\'s default message and no greeting', async () => {
    const placed = await place({ variables: { name: 'Bo' }, machineDetection: 'DetectMessageEnd' });
    expect(placed.status).toBe(201);
    const call = placed.body;
    const callee = answeredOutboundCall(server, call);
    await callee.dial();
    // Asynchronous detection decided while Twilio was still opening the stream.
    expect((await sendAmdResult(server, call.twilioCallSid, 'machine_end_silence')).status).toBe(204);
    const speechBefore = openai.requestsTo('speech').length;
    await callee.connectMedia();
    await callee.closed;

    expect(ttsInputs(openai.requestsTo('speech').slice(speechBefore))).toEqual(['This is Acme. Please call us back.']);
    const received = callee.result().receivedMulaw;
    expect(received.length / BYTES_PER_MS).toBeGreaterThanOrEqual('This is Acme. Please call us back.'.length * MS_PER_CHAR - 20);
    const detail = await eventually(() => detailOf(call.id), (body) => body.endReason !== null && typesOf(body).includes('stream_closed'), 10_000);
    expect(detail).toMatchObject({ answeredBy: 'machine_end_silence', endReason: 'voicemail_left' });
    expect(detail.transcript).toEqual([expect.objectContaining({ source: 'voicemail', text: 'This is Acme. Please call us back.', interrupted: false })]);
  }, 30_000);

  it('converses as usual when a person answers: the greeting, an answer, no voicemail', async () => {
    const placed = await place({ variables: { name: 'Cy' }, machineDetection: 'DetectMessageEnd', voicemail: { message: 'Never said.' } });
    const call = placed.body;
    const callee = answeredOutboundCall(server, call);
    await callee.dial();
    await callee.connectMedia();
    expect((await sendAmdResult(server, call.twilioCallSid, 'human')).status).toBe(204);
    await callee.streamAudio(speechFixture('hours'), { trailingSilenceMs: 200 });
    const detail = await eventually(() => detailOf(call.id), (body) => body.transcript?.some((turn: { text: string }) => turn.text === 'We open at nine.'), 20_000);
    await callee.hangup();

    expect(detail.answeredBy).toBe('human');
    expect(detail.transcript.map((turn: { source: string; text: string }) => [turn.source, turn.text])).toEqual([
      ['first_message', 'Hello Cy, this is Acme calling.'],
      ['speech', 'What time do you open?'],
      ['speech', 'We open at nine.'],
    ]);
    expect(typesOf(detail).some((type) => type.startsWith('voicemail'))).toBe(false);
    const ended = await eventually(() => detailOf(call.id), (body) => body.endReason !== null);
    expect(ended.endReason).toBe('stream_stopped');
  }, 40_000);

  describe('refusals (400, nothing placed)', () => {
    it.each([
      ['a voicemail with machineDetection Enable', { machineDetection: 'Enable', voicemail: { message: 'Hi.' } }, 'voicemail_needs_detect_message_end'],
      ['a voicemail without machine detection', { voicemail: { message: 'Hi.' } }, 'voicemail_needs_detect_message_end'],
      ["the agent's default voicemail with machineDetection Enable", { machineDetection: 'Enable' }, 'voicemail_needs_detect_message_end'],
      ['an empty message', { machineDetection: 'DetectMessageEnd', voicemail: { message: '   ' } }, 'validation_failed'],
      ['a message over 2000 characters', { machineDetection: 'DetectMessageEnd', voicemail: { message: 'x'.repeat(2001) } }, 'validation_failed'],
      ['a voicemail without a message', { machineDetection: 'DetectMessageEnd', voicemail: {} }, 'validation_failed'],
    ])('refuses %s', async (_label, body, code) => {
      const before = twilioRest.requestsFor('create_call').length;
      const refused = await place(body);
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe(code);
      if (code === 'voicemail_needs_detect_message_end') expect(refused.body.message).toContain('DetectMessageEnd');
      else expect(refused.body.details.map((detail: { field: string }) => detail.field)).toContain('voicemail.message');
      expect(twilioRest.requestsFor('create_call').length).toBe(before);
    });

    it('refuses a voicemail for the echo agent, which cannot speak one', async () => {
      const refused = await postCall(server, server.adminApiKey, { agentId: echoLine.agentId, to: uniqueE164(), from: echoLine.number, machineDetection: 'DetectMessageEnd', voicemail: { message: 'Hi.' } });
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe('voicemail_not_supported');
    });

    it('places a call with "voicemail": null even though the agent has a default, with any detection mode', async () => {
      const placed = await place({ machineDetection: 'Enable', voicemail: null });
      expect(placed.status).toBe(201);
      expect((await server.api(`/v1/calls/${placed.body.id}/hangup`, { method: 'POST' })).status).toBe(200);
    });
  });
});
