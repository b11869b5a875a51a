import { Writable } from 'node:stream';
import { encodeMulaw, sineTone } from '@switchboard/audio';
import { callTo } from '../support/conversation-agents';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

/**
 * A call's end survives the database. The server runs on a PostgreSQL of this test's own; in the
 * middle of a call that database is stopped, the caller hangs up while it is down, and it comes back
 * a few seconds later. Before this was built, the end was tried once and only logged: the call held
 * its concurrency slot for ever, was never priced, and its buffered events were dropped on close.
 * Now the end is retried until it lands and the events are kept until written.
 */
describe('Call ends survive a database outage (e2e, a PostgreSQL of its own stopped and restarted)', () => {
  let postgres: PrivatePostgres;
  let server: TestServer;
  const logs: string[] = [];

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    const logDestination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logs.push(chunk.toString('utf8'));
        done();
      },
    });
    server = await startTestServer({ DATABASE_URL: postgres.url, MIGRATE_ON_START: 'true', LOG_LEVEL: 'warn' }, { logDestination });
  }, 90_000);

  afterAll(async () => {
    await server?.close();
    await postgres?.destroy();
  });

  const organization = async () => (await server.api('/v1/organization')).body;

  it('finalises the call, prices it and writes its events once the database is back; activeCalls returns to 0', async () => {
    const tone = encodeMulaw(sineTone({ frequencyHz: 440, sampleRate: 8000, durationMs: 2_000, amplitudeDbfs: -12 }));
    const call = callTo(server, server.echoNumber);
    const twiml = await call.dial();
    const callId = twiml.stream!.parameters['callId']!;
    await call.connectMedia();
    await call.streamAudio(tone, { trailingSilenceMs: 200 });
    expect((await organization()).activeCalls).toBe(1);

    // The database goes away mid-call; the caller hangs up while it is down.
    await postgres.stop();
    const closed = await call.hangup();
    expect(closed.closedBy).toBe('caller');
    // The server stays up meanwhile (liveness does not need the database) and keeps trying: asked
    // once storing the end has failed at least twice with the database down.
    await eventually(
      async () => logs.filter((line) => line.includes(callId) && line.includes('could not be finalised')).length,
      (failedAttempts) => failedAttempts >= 2,
      30_000,
    );
    expect((await fetch(`${server.serverUrl}/health`)).status).toBe(200);
    await postgres.start();

    const usage = await eventually(organization, (body) => body?.activeCalls === 0, 60_000);
    expect(usage.activeCalls).toBe(0);
    const detail = await eventually(async () => (await server.api(`/v1/calls/${callId}`)).body, (body) => body?.endReason !== null && body?.cost?.status === 'priced', 30_000);
    expect(detail.endReason).toBe('stream_stopped');
    expect(detail.cost.lines.length).toBeGreaterThan(0);
    // The events buffered while the database was down are written, not dropped: they are retried on
    // their own backoff (2, 4, 8 ... s), so they may land after the end itself.
    const typesOf = async () => ((await server.api(`/v1/calls/${callId}`)).body.events as { type: string }[]).map((event) => event.type);
    const types = await eventually(typesOf, (written) => written.includes('stream_closed'), 45_000);
    expect(types).toEqual(expect.arrayContaining(['stream_started', 'stream_stopped', 'stream_closed']));
    expect(types).not.toContain('events_dropped');
  }, 120_000);
});
