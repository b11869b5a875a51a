/**
 * One call runtime, two transports: the same scenarios run against Twilio's media stream (the
 * simulated Twilio caller) and the browser's web call (a Node client on the browser protocol), each
 * over a real socket to a real server. What a call does between `start` and its last record is the
 * CallRuntime's, so every scenario must read the same on both; only the wire differs.
 */
import { sineTone } from '@switchboard/audio';
import { FakeOpenAiServer, FakeTwilioRestServer } from '@switchboard/testing';
import { Client } from 'pg';
import { CallReconciler } from '../../apps/server/src/call-lifecycle/call-reconciler.service';
import { PrismaService } from '@switchboard/persistence';
import { testDatabaseUrl } from '../support/database';
import { eventually, startTestServer, type TestServer } from '../support/test-server';
import { phoneTransport, webTransport, type TransportCaller } from '../support/transport-callers';

jest.setTimeout(60_000);

type CallEvent = { type: string; payload: Record<string, unknown> };

describe.each([phoneTransport, webTransport])('one call runtime over the $name transport (e2e)', (transport) => {
  let server: TestServer;
  let engines: FakeOpenAiServer;
  let twilio: FakeTwilioRestServer;
  const echo = { engine: 'echo' as const, config: {} };
  let pipeline: { engine: 'pipeline'; config: object };

  beforeAll(async () => {
    // A reply that plays for 4 s, streamed in awkward chunks: long enough to speak over.
    const reply = sineTone({ frequencyHz: 440, sampleRate: 24_000, durationMs: 4000, amplitudeDbfs: -12 });
    engines = await FakeOpenAiServer.start({
      transcription: () => ({ text: 'What time do you open tomorrow?' }),
      chat: () => ({ text: ['We open at nine', ' in the morning.'], usage: { promptTokens: 40, completionTokens: 9 } }),
      speech: () => ({ pcm: reply, chunkBytes: [4801, 1234, 161] }),
    });
    twilio = await FakeTwilioRestServer.start({ acceptUnknownCalls: true });
    server = await startTestServer({ TWILIO_ACCOUNT_SID: twilio.accountSid, TWILIO_AUTH_TOKEN: twilio.authToken, TWILIO_API_BASE_URL: twilio.baseUrl });
    const remote = { provider: 'openai', baseUrl: engines.baseUrl };
    pipeline = {
      engine: 'pipeline',
      config: { firstMessage: null, stt: { ...remote, model: 'whisper-1' }, llm: { ...remote, model: 'gpt-test' }, tts: { ...remote, model: 'tts-test', voice: 'alloy' } },
    };
  }, 30_000);

  afterAll(async () => {
    await server?.close();
    await Promise.all([engines?.close(), twilio?.close()]);
  });

  const detailOf = async (callId: string) => (await server.api(`/v1/calls/${callId}`)).body;
  const eventsOf = (detail: { events: CallEvent[] }, type: string) => detail.events.filter((event) => event.type === type);
  /** The call once its runtime has closed its records (the `stream_closed` event is written before the end). */
  const ended = (callId: string) => eventually(() => detailOf(callId), (body) => body.endReason !== null && body.events.some((event: CallEvent) => event.type === 'stream_closed'), 15_000);

  /**
   * Runs `whileLocked` with the call's row locked by another database session: the server's token
   * claim (an UPDATE of that row) waits until the lock is released, so whatever the caller sends
   * meanwhile arrives before the call is authorised.
   */
  async function withClaimHeldUp(callId: string, whileLocked: () => Promise<void>): Promise<void> {
    const locker = new Client({ connectionString: testDatabaseUrl() });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT id FROM calls WHERE id = $1 FOR UPDATE', [callId]);
      await whileLocked();
      await locker.query('COMMIT');
    } finally {
      await locker.end();
    }
  }

  it('authorisation: a token that is not the call\'s is refused and leaves the call alone; the call\'s own token starts it', async () => {
    const refused = await transport.admit(server, echo);
    await refused.connectWithWrongToken();
    expect(await refused.closed()).toBe(1008);
    const untouched = await detailOf(refused.callId);
    expect(untouched.endReason).toBeNull();
    expect(eventsOf(untouched, 'stream_started')).toEqual([]);

    const caller = await transport.admit(server, echo);
    await caller.connect();
    await caller.silence(200);
    await eventually(async () => caller.framesReceived(), (frames) => frames > 0, 10_000);
    expect(await caller.hangUp()).toBe(1000);
    const detail = await ended(caller.callId);
    expect(detail.endReason).toBe('stream_stopped');
    expect(eventsOf(detail, 'stream_started')).toHaveLength(1);
  });

  it('held input: what the caller says while the token is checked reaches the agent, all of it, once the call is authorised', async () => {
    const caller = await transport.admit(server, echo);
    await withClaimHeldUp(caller.callId, async () => {
      await caller.connect();
      await caller.speak('hours', 300);
    });
    // The echo agent returns one frame per frame: everything held comes back once the claim lands.
    await eventually(async () => caller.framesReceived(), (frames) => frames >= caller.speechFrames('hours'), 15_000);
    await caller.hangUp();
    const detail = await ended(caller.callId);
    expect(detail.endReason).toBe('stream_stopped');
    expect(eventsOf(detail, 'protocol_error')).toEqual([]);
    expect(eventsOf(detail, 'error')).toEqual([]);
  });

  it('key presses before authorisation are kept: recorded on the call and given to the agent, in order', async () => {
    const caller = await transport.admit(server, pipeline);
    await withClaimHeldUp(caller.callId, async () => {
      await caller.connect();
      for (const digit of ['1', '2', '3', '#']) caller.pressKey(digit);
      await caller.silence(100);
    });
    const detail = await eventually(() => detailOf(caller.callId), (body) => body.transcript?.some((turn: { source: string }) => turn.source === 'dtmf'), 30_000);
    expect(detail.transcript[0]).toMatchObject({ role: 'user', source: 'dtmf', text: 'The caller pressed 1 2 3 #' });
    await caller.hangUp();
    const closed = await ended(caller.callId);
    expect(eventsOf(closed, 'dtmf').map((event) => event.payload['digit'])).toEqual(['1', '2', '3', '#']);
  });

  it('barge-in with marks: the reply plays with marks echoed, the caller speaks over it, the reply is cleared and recorded as interrupted', async () => {
    const caller = await transport.admit(server, pipeline);
    await caller.connect();
    await caller.speak('hours', 300);
    // Half a second of the reply has arrived and a mark has been played: the reply is being heard.
    await eventually(async () => ({ frames: caller.framesReceived(), marks: caller.marksPlayed() }), (seen) => seen.frames >= 25 && seen.marks >= 1, 15_000);
    await caller.speak('interrupt', 200);
    await eventually(async () => caller.clearsReceived(), (clears) => clears >= 1, 10_000);
    await caller.hangUp();

    const detail = await eventually(
      () => detailOf(caller.callId),
      (body) => body.cost?.status === 'priced' && body.transcript?.some((turn: { interrupted: boolean }) => turn.interrupted),
      15_000,
    );
    expect(detail.transcript.find((turn: { role: string }) => turn.role === 'assistant')).toMatchObject({ text: 'We open at nine in the morning.', interrupted: true });
    const [waterfall] = detail.latency;
    expect(waterfall.firstMarkEchoedMs).not.toBeNull();
    expect(waterfall.interruptedAtMs).not.toBeNull();
    const closed = eventsOf(detail, 'stream_closed')[0]!.payload;
    expect(closed['marksCleared']).toBeGreaterThanOrEqual(1);
    expect(closed['heardMs']).toBeGreaterThan(0);
  });

  it('ends exactly once when the caller hangs up while the carrier reports the end and the reconciler takes the call for quiet', async () => {
    const caller: TransportCaller = await transport.admit(server, echo);
    await caller.connect();
    await caller.silence(200);
    await eventually(async () => caller.framesReceived(), (frames) => frames > 0, 10_000);
    // The reconciler now sees a call whose media went quiet an hour ago (as if its carrier had died).
    await server.app.get(PrismaService).$executeRaw`UPDATE calls SET media_seen_at = now() - interval '1 hour', stream_started_at = now() - interval '1 hour' WHERE id = ${caller.callId}::uuid`;
    await Promise.all([caller.hangUp(), caller.carrierSaysCompleted?.(), server.app.get(CallReconciler).reconcileNow()]);

    const detail = await ended(caller.callId);
    // Every end went through the call's runtime: the caller's, the carrier's (it ends the stream as
    // its stop would) and the reconciler's (it leaves a call whose runtime is live here to it).
    expect(detail.endReason).toBe('stream_stopped');
    expect(detail.endedAt).not.toBeNull();
    expect(eventsOf(detail, 'stream_closed')).toHaveLength(1);
    expect(eventsOf(detail, 'reconciled')).toEqual([]);
    const prisma = server.app.get(PrismaService);
    const charges = await prisma.costLedgerLine.findMany({ where: { callId: caller.callId, kind: 'charge' } });
    const components = charges.map((line) => line.component);
    expect(new Set(components).size).toBe(components.length);
    // call.ended is only written for an organization that subscribes to it (other specs may): never twice.
    const ends = await prisma.webhookEvent.count({ where: { type: 'call.ended', callId: caller.callId } });
    expect(ends).toBeLessThanOrEqual(1);
  });
});
