import { decodeMulaw, sineTone } from '@switchboard/audio';
import { parseTwiml, type SimulatedTwilioCall } from '@switchboard/simulated-caller';
import { type FakeCallUpdate, FakeOpenAiServer, FakeTwilioRestServer, readTwimlProgram, type RecordedRequest } from '@switchboard/testing';
import { bindAgent, callTo, dialAgent, speechFixture } from '../support/conversation-agents';
import { storeSecret } from '../support/secrets';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

/**
 * Warm transfer end to end: a caller (the simulated Twilio caller) asks a pipeline agent for a
 * person; the model calls transfer_call with a warm destination. Twilio is FakeTwilioRestServer,
 * which also plays Twilio's side of the calls: it runs the TwiML the server sets (the caller into a
 * conference, on hold), calls the server back signed (the destination's status, the whisper TwiML
 * when it answers, the conference's join and leave), and the test plays the network: the
 * destination rings, answers or does not. As Twilio does, replacing the caller's TwiML ends the
 * agent's media stream, and a <Connect><Stream> opens a new one (the test opens it).
 */

const API_KEY_SECRET = 'warm-transfer-openai-key';
const FAKE_API_KEY = 'sk-fake-warm-transfer-e2e';
const BILLING = '+15551239876';
const SUMMARY = 'Ada Lovelace disputes a charge of forty dollars on her last invoice.';

function speechFor(text: string): Int16Array {
  return sineTone({ frequencyHz: 440, sampleRate: 24_000, durationMs: Math.max(200, text.length * 30), amplitudeDbfs: -12 });
}

function chatMessages(request: RecordedRequest): { role: string; content: string | null }[] {
  return (request.json as { messages: { role: string; content: string | null }[] }).messages;
}

const lastUserMessage = (request: RecordedRequest) => [...chatMessages(request)].reverse().find((message) => message.role === 'user')?.content ?? '';

describe('warm transfer (e2e)', () => {
  let server: TestServer;
  let openai: FakeOpenAiServer;
  let twilioRest: FakeTwilioRestServer;
  let transcript = '';

  const agentConfig = (answerTimeoutS = 20) => ({
    stt: { provider: 'openai', model: 'whisper-1', baseUrl: openai.baseUrl, apiKeySecret: API_KEY_SECRET },
    llm: { provider: 'openai', model: 'gpt-test', baseUrl: openai.baseUrl, apiKeySecret: API_KEY_SECRET },
    tts: { provider: 'openai', model: 'tts-test', baseUrl: openai.baseUrl, apiKeySecret: API_KEY_SECRET, voice: 'alloy' },
    tools: [
      {
        type: 'transfer_call',
        destinations: [
          {
            number: BILLING,
            label: 'billing',
            mode: 'warm',
            holdMessage: 'Please hold while I connect you to billing.',
            holdMusicUrl: 'https://music.example.com/hold.mp3',
            answerTimeoutS,
            noAnswerMessage: "I couldn't reach anyone in billing. Can I help you with something else?",
          },
        ],
      },
    ],
  });

  beforeAll(async () => {
    openai = await FakeOpenAiServer.start({
      apiKey: FAKE_API_KEY,
      transcription: () => ({ text: transcript }),
      chat: (request) =>
        lastUserMessage(request).includes('billing')
          ? { toolCalls: [{ id: 'call_warm_1', name: 'transfer_call', arguments: JSON.stringify({ destination: BILLING, summary: SUMMARY }) }] }
          : { text: ['We open at nine.'] },
      speech: (request) => ({ pcm: speechFor(String((request.json as { input: string }).input)), chunkBytes: [4800] }),
    });
    twilioRest = await FakeTwilioRestServer.start({ acceptUnknownCalls: true });
    server = await startTestServer({ TWILIO_ACCOUNT_SID: twilioRest.accountSid, TWILIO_AUTH_TOKEN: twilioRest.authToken, TWILIO_API_BASE_URL: twilioRest.baseUrl });
    // Twilio's callbacks (signed with the operator's account, which these calls belong to) reach the server.
    twilioRest.deliverWebhooksTo(server.publicBaseUrl, server.serverUrl);
    await storeSecret(server, API_KEY_SECRET, FAKE_API_KEY);
  }, 30_000);

  afterAll(async () => {
    await server?.close();
    await Promise.all([openai?.close(), twilioRest?.close()]);
  });

  const detailOf = async (callId: string) => (await server.api(`/v1/calls/${callId}`)).body;
  const transferEvents = (detail: { events: { type: string }[] }) => detail.events.map((event) => event.type).filter((type) => type.startsWith('transfer_'));

  /**
   * Twilio's side of the caller's call: replacing its TwiML with the conference stops the agent's
   * stream (`stop`, close); a redirect to <Connect><Stream> opens a new stream on the same call.
   */
  function playTwilioFor(caller: SimulatedTwilioCall, number: string): { returned: Promise<SimulatedTwilioCall> } {
    let resolveReturned!: (call: SimulatedTwilioCall) => void;
    const returned = new Promise<SimulatedTwilioCall>((resolve) => (resolveReturned = resolve));
    twilioRest.onCallUpdate = async (update: FakeCallUpdate) => {
      if (update.call.sid !== caller.parties.callSid || update.kind !== 'redirect' || update.call.twiml === undefined) return;
      const program = readTwimlProgram(update.call.twiml);
      if (program.conference) await caller.hangup();
      const stream = parseTwiml(update.call.twiml).stream;
      if (stream) {
        const again = callTo(server, number, { callSid: caller.parties.callSid, from: caller.parties.from });
        await again.connectMedia({ stream });
        resolveReturned(again);
      }
    };
    return { returned };
  }

  async function askForBilling(answerTimeoutS?: number): Promise<{ caller: SimulatedTwilioCall; callId: string; number: string; destinationSid: string; returned: Promise<SimulatedTwilioCall> }> {
    const { number } = await bindAgent(server, { engine: 'pipeline', config: agentConfig(answerTimeoutS) });
    const { call: caller, callId } = await dialAgent(server, number, '+15550100200');
    const { returned } = playTwilioFor(caller, number);
    transcript = 'I need to talk to someone in billing.';
    await caller.streamAudio(speechFixture('transfer'), { trailingSilenceMs: 200 });
    const created = await eventually(async () => [...twilioRest.calls.values()].find((call) => call.to === BILLING && call.dateCreated.getTime() >= Date.now() - 60_000 && call.status === 'queued'), (found) => found !== undefined, 20_000);
    return { caller, callId, number, destinationSid: created!.sid, returned };
  }

  it('holds the caller in the call\'s conference, dials billing, whispers the summary, connects them and leaves', async () => {
    const { caller, callId, number, destinationSid } = await askForBilling();
    await caller.closed;

    // (1) The caller was put in the call's own conference, on hold with the configured music.
    const hold = twilioRest.requestsFor('update_call').find((request) => request.callSid === caller.parties.callSid)!;
    const holdProgram = readTwimlProgram(String(hold.form['Twiml']));
    expect(holdProgram.conference).toMatchObject({
      name: `switchboard-${callId}`,
      startConferenceOnEnter: false,
      endConferenceOnExit: true,
      waitUrl: 'https://music.example.com/hold.mp3',
      statusCallback: expect.stringMatching(/^https:\/\/switchboard\.test\/twilio\/transfers\/[0-9a-f-]{36}\/conference$/),
    });
    const transferId = /transfers\/([0-9a-f-]{36})\//.exec(holdProgram.conference!.statusCallback!)![1];

    // (2) Billing was dialled from the agent's number, with a bound and callbacks for its progress.
    const dial = twilioRest.requestsFor('create_call').find((request) => request.form['To'] === BILLING && String(request.form['Url']).includes(transferId!))!;
    expect(dial.form).toMatchObject({
      From: number,
      Url: `https://switchboard.test/twilio/transfers/${transferId}/whisper`,
      StatusCallback: `https://switchboard.test/twilio/transfers/${transferId}/dial-status`,
      StatusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
      Timeout: '20',
    });

    // (3) Billing answers: it hears the summary, joins, and that connects the caller.
    twilioRest.ringCall(destinationSid);
    const whisper = await twilioRest.answerCall(destinationSid);
    await twilioRest.webhooksSettled();
    expect(whisper.says).toEqual([`Incoming transfer from the phone agent. ${SUMMARY}`]);
    expect(whisper.conference).toMatchObject({ name: `switchboard-${callId}`, startConferenceOnEnter: true, endConferenceOnExit: true });
    const conference = twilioRest.conference(`switchboard-${callId}`)!;
    expect(conference.status).toBe('in-progress');
    expect(conference.participants.map((participant) => [participant.callSid, participant.leftAt])).toEqual([
      [caller.parties.callSid, null],
      [destinationSid, null],
    ]);
    // Every callback the server got was accepted (signed, for this call's account).
    expect(twilioRest.webhookDeliveries.filter((delivery) => delivery.url.includes(transferId!)).map((delivery) => delivery.status).every((status) => status === 200 || status === 204)).toBe(true);

    const detail = await eventually(() => detailOf(callId), (body) => body.endReason !== null, 10_000);
    expect(detail.endReason).toBe('transferred');
    expect(transferEvents(detail)).toEqual(['transfer_hold', 'transfer_dialing', 'transfer_answered', 'transfer_connected']);
    expect(detail.events.find((event: { type: string }) => event.type === 'transfer_connected').payload).toMatchObject({ transferId, to: BILLING, callSid: destinationSid });
    expect(detail.events.find((event: { type: string }) => event.type === 'stream_closed').payload.reason).toBe('transfer_hold');
    expect(detail.transcript.map((turn: { role: string; text: string }) => [turn.role, turn.text])).toEqual([
      ['user', 'I need to talk to someone in billing.'],
      ['assistant', 'Please hold while I connect you to billing.'],
    ]);
    expect(detail.toolInvocations[0]).toMatchObject({ name: 'transfer_call', arguments: { destination: BILLING, summary: SUMMARY }, result: { transferring: true, to: BILLING, mode: 'warm' } });

    // Billing hangs up later: the conference ends, and so does the caller's call.
    twilioRest.endCall(destinationSid, 'completed');
    expect(twilioRest.call(caller.parties.callSid)?.status).toBe('completed');
  }, 60_000);

  it('takes the caller back when billing does not answer, says so, and goes on with the conversation so far', async () => {
    const { caller, callId, destinationSid, returned } = await askForBilling();
    await caller.closed;
    const speechBefore = openai.requestsTo('speech').length;
    const chatBefore = openai.requestsTo('chat').length;

    twilioRest.ringCall(destinationSid);
    twilioRest.endCall(destinationSid, 'no-answer');
    const back = await returned;
    const firstFrame = back.waitForMessage((message) => message.event === 'media', 15_000);
    await firstFrame;
    const apology = "I couldn't reach anyone in billing. Can I help you with something else?";
    const said = await eventually(() => detailOf(callId), (body) => body.transcript?.some((turn: { source: string }) => turn.source === 'transfer_return'), 15_000);
    expect(openai.requestsTo('speech').slice(speechBefore).map((request) => (request.json as { input: string }).input)).toEqual([apology]);
    const audio = decodeMulaw(back.result().receivedMulaw);
    expect(audio.length / 8).toBeGreaterThanOrEqual(apology.length * 30 - 20);
    expect(Math.max(...audio.slice(0, 8000).map(Math.abs))).toBeGreaterThan(1000);

    // The new stream's agent remembers the conversation before the transfer.
    transcript = 'What time do you open?';
    await back.streamAudio(speechFixture('hours'), { trailingSilenceMs: 200 });
    const detail = await eventually(() => detailOf(callId), (body) => body.transcript?.some((turn: { text: string }) => turn.text === 'We open at nine.'), 20_000);
    await back.hangup();
    const request = openai.requestsTo('chat').slice(chatBefore)[0]!;
    expect(chatMessages(request).filter((message) => message.role !== 'system').map((message) => [message.role, message.content])).toEqual([
      ['user', 'I need to talk to someone in billing.'],
      ['assistant', 'Please hold while I connect you to billing.'],
      ['assistant', apology],
      ['user', 'What time do you open?'],
    ]);

    expect(said.transcript.find((turn: { source: string }) => turn.source === 'transfer_return').text).toBe(apology);
    expect(detail.transcript.map((turn: { index: number; source: string }) => [turn.index, turn.source])).toEqual([
      [0, 'speech'],
      [1, 'speech'],
      [2, 'transfer_return'],
      [3, 'speech'],
      [4, 'speech'],
    ]);
    const ended = await eventually(() => detailOf(callId), (body) => body.endReason !== null, 10_000);
    expect(ended.endReason).toBe('stream_stopped');
    expect(transferEvents(ended)).toEqual(['transfer_hold', 'transfer_dialing', 'transfer_no_answer', 'transfer_returned']);
    expect(ended.events.find((event: { type: string }) => event.type === 'transfer_no_answer').payload).toMatchObject({ outcome: 'no_answer', status: 'no-answer' });
    // The caller left the conference when taken back: nobody is left waiting in it.
    expect(twilioRest.conference(`switchboard-${callId}`)?.status).toBe('completed');
    expect(ended.events.filter((event: { type: string }) => event.type === 'stream_started')).toHaveLength(2);
  }, 60_000);

  it('ends the call as transfer_abandoned when the caller hangs up on hold, and stops ringing billing', async () => {
    const { caller, callId, destinationSid } = await askForBilling();
    await caller.closed;
    twilioRest.ringCall(destinationSid);
    // The caller gives up while on hold: Twilio takes them out of the conference.
    twilioRest.endCall(caller.parties.callSid, 'completed');
    const detail = await eventually(() => detailOf(callId), (body) => body.endReason !== null, 10_000);
    expect(detail.endReason).toBe('transfer_abandoned');
    expect(transferEvents(detail)).toEqual(['transfer_hold', 'transfer_dialing', 'transfer_abandoned']);
    expect(twilioRest.requestsFor('update_call').find((request) => request.callSid === destinationSid)?.form).toEqual({ Status: 'completed' });
    expect(twilioRest.call(destinationSid)?.status).toBe('completed');
  }, 60_000);

  it('gives up on billing once its answer bound has passed without a word from Twilio, and takes the caller back', async () => {
    const { caller, callId, destinationSid, returned } = await askForBilling(5);
    await caller.closed;
    twilioRest.ringCall(destinationSid);
    // Twilio never reports the end of the ringing: the server's own bound (5 s + its grace) decides.
    const back = await returned;
    await back.waitForMessage((message) => message.event === 'media', 15_000);
    const detail = await eventually(() => detailOf(callId), (body) => transferEvents(body).includes('transfer_returned'), 10_000);
    expect(transferEvents(detail)).toEqual(['transfer_hold', 'transfer_dialing', 'transfer_no_answer', 'transfer_returned']);
    expect(detail.events.find((event: { type: string }) => event.type === 'transfer_no_answer').payload).toMatchObject({ outcome: 'no_answer', reason: 'timeout' });
    expect(twilioRest.call(destinationSid)?.status).toBe('completed');
    await back.hangup();
  }, 60_000);

  it('refuses transfer callbacks without a valid signature (403), and changes nothing', async () => {
    const path = '/twilio/transfers/00000000-0000-4000-8000-000000000000/dial-status';
    const form = { AccountSid: server.accountSid, CallSid: `CA${'a'.repeat(32)}`, CallStatus: 'no-answer' };
    const unsigned = await fetch(`${server.serverUrl}${path}`, { method: 'POST', body: new URLSearchParams(form) });
    expect(unsigned.status).toBe(403);
    const forged = await fetch(`${server.serverUrl}${path}`, {
      method: 'POST',
      headers: { 'x-twilio-signature': 'bm90IGEgc2lnbmF0dXJl' },
      body: new URLSearchParams(form),
    });
    expect(forged.status).toBe(403);
  });
});
