import { type CloseInfo, SimulatedTwilioCall, TwilioCallerError } from '@switchboard/simulated-caller';
import { createTestPrisma, uniqueCallSid } from '../support/database';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

/** 200 ms of mu-law silence: what a quiet line carries. */
const SILENCE_200MS = new Uint8Array(1600).fill(0xff);
/** WebSocket close code for a policy violation (bad or reused stream token). */
const CLOSE_POLICY_VIOLATION = 1008;

/** The media WebSocket: signature on the upgrade, the single-use token, malformed input, endings. */
describe('Twilio media stream socket (e2e)', () => {
  let server: TestServer;
  const prisma = createTestPrisma(2);

  beforeAll(async () => {
    server = await startTestServer({ STREAM_TOKEN_TTL_MS: '1500' });
  });
  afterAll(async () => {
    await server.close();
    await prisma.$disconnect();
  });

  const newCall = () =>
    new SimulatedTwilioCall({
      serverUrl: server.serverUrl,
      publicBaseUrl: server.publicBaseUrl,
      authToken: server.authToken,
      accountSid: server.accountSid,
      from: '+15550003333',
      to: server.echoNumber,
      callSid: uniqueCallSid(),
    });

  const callRecord = (callId: string) => prisma.call.findUniqueOrThrow({ where: { id: callId }, include: { events: { orderBy: { id: 'asc' } } } });
  const finalised = (callId: string) => eventually(() => callRecord(callId), (call) => call.endReason !== null);

  async function dialed(): Promise<{ call: SimulatedTwilioCall; callId: string }> {
    const call = newCall();
    const twiml = await call.dial();
    return { call, callId: twiml.stream!.parameters['callId']! };
  }

  it.each([
    ['tampered', 'tampered' as const],
    ['missing', 'omit' as const],
  ])('rejects the upgrade with HTTP 403 when the signature is %s, and the call is not started', async (_label, signature) => {
    const { call, callId } = await dialed();
    const error = await call.connectMedia({ signature }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TwilioCallerError);
    expect(error).toMatchObject({ code: 'MEDIA_UPGRADE_REJECTED', httpStatus: 403 });
    const record = await callRecord(callId);
    expect(record.streamStartedAt).toBeNull();
    expect(record.streamTokenUsedAt).toBeNull();
  });

  it('rejects a start without a token (close 1008) and leaves the call untouched', async () => {
    const { call, callId } = await dialed();
    await call.connectMedia({ customParameters: { callId } });
    const closed: CloseInfo = await call.closed;
    expect(closed).toMatchObject({ code: CLOSE_POLICY_VIOLATION, closedBy: 'server' });
    const record = await callRecord(callId);
    expect(record.streamStartedAt).toBeNull();
    expect(record.endReason).toBeNull();
  });

  it('rejects a reused token while the first stream keeps working', async () => {
    const { call: first, callId } = await dialed();
    await first.connectMedia();
    await first.streamAudio(SILENCE_200MS);
    await first.waitForMessage((message) => message.event === 'media');

    const replay = newCall();
    await replay.connectMedia({ stream: first.result().twiml!.stream! });
    expect(await replay.closed).toMatchObject({ code: CLOSE_POLICY_VIOLATION, closedBy: 'server' });

    // The legitimate stream is unaffected: still open, still echoed.
    expect(first.isMediaOpen).toBe(true);
    await first.streamAudio(SILENCE_200MS);
    await first.hangup();
    const record = await finalised(callId);
    expect(record.endReason).toBe('stream_stopped');
  });

  it('rejects an expired token', async () => {
    const { call, callId } = await dialed();
    await new Promise((resolve) => setTimeout(resolve, 1_700));
    await call.connectMedia();
    expect(await call.closed).toMatchObject({ code: CLOSE_POLICY_VIOLATION });
    expect((await callRecord(callId)).streamStartedAt).toBeNull();
  });

  it('survives malformed and out-of-order frames, records them, and keeps echoing', async () => {
    const { call, callId } = await dialed();
    await call.connectMedia();
    const streamSid = call.result().streamSid;
    call.sendRaw('{not json');
    call.sendRaw(JSON.stringify({ event: 'teleport', streamSid }));
    call.sendRaw(JSON.stringify({ event: 'media', streamSid, sequenceNumber: '3', media: { track: 'inbound', chunk: '1', timestamp: '0' } }));
    call.sendRaw(JSON.stringify({ event: 'media', streamSid: 'MZ-someone-else', sequenceNumber: '4', media: { track: 'inbound', chunk: '2', timestamp: '20', payload: '//8=' } }));
    call.sendRaw(new Uint8Array([1, 2, 3]));
    const result = call.result();
    call.sendRaw(
      JSON.stringify({
        event: 'start',
        sequenceNumber: '5',
        streamSid,
        start: {
          accountSid: result.accountSid,
          streamSid,
          callSid: result.callSid,
          tracks: ['inbound'],
          customParameters: {},
          mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
        },
      }),
    );
    await call.streamAudio(SILENCE_200MS);
    await call.waitForMessage((message) => message.event === 'media');
    expect(call.isMediaOpen).toBe(true);
    await call.hangup();

    const record = await finalised(callId);
    expect(record.endReason).toBe('stream_stopped');
    const errors = record.events.filter((event) => event.type === 'protocol_error').map((event) => (event.payload as { code: string }).code);
    expect(errors).toEqual(expect.arrayContaining(['invalid_json', 'unknown_event', 'schema_violation', 'stream_sid_mismatch', 'duplicate_start']));
    expect(errors.length).toBeGreaterThanOrEqual(6);
  });

  it('closes cleanly on stop and finalises the call with its events', async () => {
    const { call, callId } = await dialed();
    await call.connectMedia();
    await call.streamAudio(SILENCE_200MS);
    call.sendDtmf('7');
    await call.streamAudio(SILENCE_200MS);
    const closed = await call.hangup();
    expect(closed.code).toBe(1000);
    const record = await finalised(callId);
    expect(record.endReason).toBe('stream_stopped');
    expect(record.streamStartedAt).toBeInstanceOf(Date);
    expect(record.twilioStreamSid).toBe(call.result().streamSid);
    const types = record.events.map((event) => event.type);
    expect(types[0]).toBe('stream_started');
    expect(types).toEqual(expect.arrayContaining(['dtmf', 'stream_stopped', 'stream_closed']));
    expect(record.events.find((event) => event.type === 'dtmf')?.payload).toEqual({ digit: '7' });
  });

  it('finalises the call when the peer vanishes without stop', async () => {
    const { call, callId } = await dialed();
    await call.connectMedia();
    await call.streamAudio(SILENCE_200MS);
    await call.dropConnection();
    const record = await finalised(callId);
    expect(record.endReason).toBe('connection_lost');
    expect(record.events.map((event) => event.type)).toContain('stream_closed');
  });
});
