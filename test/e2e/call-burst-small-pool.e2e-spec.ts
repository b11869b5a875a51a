import { encodeMulaw, sineTone } from '@switchboard/audio';
import type { CallResult } from '@switchboard/simulated-caller';
import { eventually, startTestServer, type TestServer } from '../support/test-server';

/**
 * Fifty calls arriving at once on a server whose database pool has only two connections: every
 * call start (voice webhook + admission), stream claim, event write and call end must queue for a
 * connection rather than wedge the pool. Found at 250 concurrent calls: webhooks answered 500 and
 * the pool ended up held by transactions waiting for a second connection. Every call must be
 * admitted, echoed and finalised, and the server must go on answering.
 */
const CALLS = 50;

describe('A burst of 50 calls on a pool of 2 connections (e2e)', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ DATABASE_POOL_MAX: '2' });
  }, 30_000);

  afterAll(async () => server?.close());

  it('admits, streams and finalises every call, with no error answer and no wedge', async () => {
    const audio = encodeMulaw(sineTone({ frequencyHz: 440, durationMs: 1000, sampleRate: 8000, amplitudeDbfs: -12 }));
    const results: CallResult[] = await Promise.all(
      Array.from({ length: CALLS }, (_, i) => server.callEcho({ from: `+1555010${String(i).padStart(4, '0')}`, audio, trailingSilenceMs: 600 })),
    );
    expect(results.filter((result) => result.rejected).map((result) => result.sayText)).toEqual([]);
    for (const result of results) {
      expect(result.protocolErrors).toEqual([]);
      // The echo came back, frame for frame: nothing the caller sent was lost to the queueing
      // (the caller hangs up once its frames are back, so a slow tick cannot cut the last ones).
      expect(result.latency.framesReceived).toBe(result.latency.framesSent);
    }
    const callIds = results.map((result) => result.twiml?.stream?.parameters['callId'] as string);
    const details = await eventually(
      () => Promise.all(callIds.map(async (callId) => (await server.api(`/v1/calls/${callId}`)).body)),
      (calls) => calls.every((call) => call.endedAt !== null && call.cost?.status === 'priced'),
      30_000,
    );
    expect(details.map((call) => call.endReason)).toEqual(Array(CALLS).fill('stream_stopped'));
    // Still answering at once afterwards.
    const health = await fetch(`${server.serverUrl}/health/ready`);
    expect(health.status).toBe(200);
  }, 90_000);
});
