import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeMulaw, sineTone } from '@switchboard/audio';
import { SimulatedTwilioCall } from '@switchboard/simulated-caller';
import { type FakeCallUpdate, FakeTwilioRestServer, freeLoopbackPort } from '@switchboard/testing';
import { Client } from 'pg';
import { testDatabaseUrl } from '../support/database';
import { BuiltServer } from '../support/built-server';
import { eventually } from '../support/test-server';

/**
 * SIGTERM drains, as a deploy or a scale-in sends it, on the server as operators run it (main.ts in a
 * process of its own). Readiness turns 503 at once while liveness stays 200; a call that still
 * arrives is served; a call that ends by itself during the drain loses nothing; a call still live at
 * DRAIN_TIMEOUT_S hears DRAIN_MESSAGE through Twilio (<Say> then <Hangup/>) and ends as
 * drain_timeout; then the process exits 0.
 */
const ECHO_NUMBER = '+15550001414';
const DRAIN_TIMEOUT_S = 4;
const DRAIN_MESSAGE = 'This line is being serviced. Please call again in a minute.';
const TONE = encodeMulaw(sineTone({ frequencyHz: 440, durationMs: 1000, sampleRate: 8000, amplitudeDbfs: -12 }));

describe('SIGTERM drains live calls (e2e, the server in its own process)', () => {
  let twilio: FakeTwilioRestServer;
  let server: BuiltServer;
  let baseUrl: string;
  let dataDir: string;

  beforeAll(async () => {
    twilio = await FakeTwilioRestServer.start({ acceptUnknownCalls: true });
    const port = await freeLoopbackPort();
    baseUrl = `http://127.0.0.1:${port}`;
    dataDir = mkdtempSync(join(tmpdir(), 'switchboard-drain-'));
    server = BuiltServer.spawn({
      PORT: String(port),
      PUBLIC_BASE_URL: baseUrl,
      DATABASE_URL: testDatabaseUrl(),
      MIGRATE_ON_START: 'false',
      DATA_DIR: dataDir,
      TWILIO_ACCOUNT_SID: twilio.accountSid,
      TWILIO_AUTH_TOKEN: twilio.authToken,
      TWILIO_API_BASE_URL: twilio.baseUrl,
      // The fake Twilio API listens on loopback, which the outbound guard refuses unless allowed.
      OUTBOUND_ALLOWED_HOSTS: '127.0.0.1',
      ECHO_AGENT_NUMBER: ECHO_NUMBER,
      DRAIN_TIMEOUT_S: String(DRAIN_TIMEOUT_S),
      DRAIN_MESSAGE,
      WORKERS: '1',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
    });
    await server.healthy(baseUrl, 90_000);
  }, 120_000);

  afterAll(async () => {
    if (server?.child.exitCode === null) server.child.kill('SIGKILL');
    await twilio?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  function caller(from: string): SimulatedTwilioCall {
    return new SimulatedTwilioCall({ serverUrl: baseUrl, authToken: twilio.authToken, accountSid: twilio.accountSid, from, to: ECHO_NUMBER });
  }

  async function connected(call: SimulatedTwilioCall): Promise<string> {
    const twiml = await call.dial();
    const callId = twiml.stream?.parameters['callId'];
    if (!callId) throw new Error(`no stream was connected: ${JSON.stringify(twiml)}`);
    await call.connectMedia();
    return callId;
  }

  it('turns readiness to 503, serves what still arrives, lets calls finish, ends the last one with the message, and exits 0', async () => {
    // Twilio's part at the bound: the update replaces the call's TwiML; Twilio then stops the stream.
    const long = caller('+15557000001');
    twilio.onCallUpdate = async (update: FakeCallUpdate) => {
      if (update.call.sid === long.parties.callSid && update.kind === 'redirect') await long.hangup();
    };
    const longCallId = await connected(long);
    void long.streamAudio(TONE);
    const short = caller('+15557000002');
    const shortCallId = await connected(short);

    const exited = new Promise<{ code: number | null; atMs: number }>((resolve) => server.child.once('exit', (code) => resolve({ code, atMs: performance.now() })));
    const sigtermAtMs = performance.now();
    server.child.kill('SIGTERM');
    const ready = await eventually(
      async () => {
        const response = await fetch(`${baseUrl}/health/ready`);
        return { status: response.status, body: await response.json() };
      },
      (answer) => answer.status === 503,
      5_000,
    );
    expect(ready).toEqual({ status: 503, body: { status: 'draining' } });
    expect((await fetch(`${baseUrl}/health`)).status).toBe(200);

    // A caller the load balancer routed here before it saw the 503 is served, not refused.
    const late = caller('+15557000003');
    const lateCallId = await connected(late);
    await late.streamAudio(TONE, { trailingSilenceMs: 200 });
    await late.hangup();

    // A call that ends by itself during the drain: every frame echoed, nothing cut.
    await short.streamAudio(TONE, { trailingSilenceMs: 400 });
    await short.hangup({ awaitEchoMs: 5_000 });
    const shortResult = short.result();
    expect(shortResult.latency.framesReceived).toBe(shortResult.latency.framesSent);

    // The long call outlives the bound: Twilio is asked to say the message and hang up.
    const { code, atMs } = await exited;
    expect(code).toBe(0);
    const update = twilio.requests.find((request) => request.operation === 'update_call' && request.callSid === long.parties.callSid);
    expect(update).toBeDefined();
    const twiml = String(update?.form['Twiml']);
    expect(twiml).toContain(`<Say>${DRAIN_MESSAGE}</Say>`);
    expect(twiml).toMatch(/<Hangup\/>\s*<\/Response>$/);
    // Twilio, not the server, ended the stream: the caller heard the message rather than a cut line.
    expect(long.result().closedBy).toBe('caller');
    const drainSeconds = (atMs - sigtermAtMs) / 1000;
    expect(drainSeconds).toBeGreaterThanOrEqual(DRAIN_TIMEOUT_S);
    expect(drainSeconds).toBeLessThan(DRAIN_TIMEOUT_S + 15);

    const calls = await endReasons([longCallId, shortCallId, lateCallId]);
    expect(calls).toEqual({ [longCallId]: 'drain_timeout', [shortCallId]: 'stream_stopped', [lateCallId]: 'stream_stopped' });
    expect(server.output).toMatch(/"msg":"draining: readiness answers 503/);
    expect(server.output).toMatch(/"callsAtStart":2,"endedWithMessage":1.*"msg":"drained"/);
  }, 90_000);
});

async function endReasons(callIds: string[]): Promise<Record<string, string | null>> {
  const client = new Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; end_reason: string | null }>('SELECT id, end_reason FROM calls WHERE id = ANY($1::uuid[])', [callIds]);
    return Object.fromEntries(rows.map((row) => [row.id, row.end_reason]));
  } finally {
    await client.end();
  }
}
