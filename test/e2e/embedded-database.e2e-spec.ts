import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, eventually, type TestServer } from '../support/test-server';

/** Half a second of a quiet line. */
const SILENCE = new Uint8Array(4000).fill(0xff);

/**
 * The zero-set-up default: no DATABASE_URL, so the server serves PGlite on loopback from DATA_DIR,
 * applies the migrations, records calls, and finds them again after a restart.
 */
describe('embedded database default (e2e)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-embedded-e2e-'));
  let server: TestServer | undefined;

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('boots without DATABASE_URL, records an echo call, and keeps it across a restart', async () => {
    server = await startTestServer({ DATABASE_URL: '', DATA_DIR: dataDir });
    const ready = await fetch(`${server.serverUrl}/health/ready`);
    expect(ready.status).toBe(200);

    const result = await server.callEcho({ audio: SILENCE, trailingSilenceMs: 200 });
    expect(result.rejected).toBe(false);
    expect(result.latency.framesReceived).toBeGreaterThan(0);
    const callId = result.twiml!.stream!.parameters['callId']!;
    const recorded = await eventually(
      () => server!.api(`/v1/calls/${callId}`),
      (response) => response.status === 200 && response.body.endReason !== null,
    );
    expect(recorded.body.endReason).toBe('stream_stopped');
    await server.close();

    // Same data directory: the call is still there.
    server = await startTestServer({ DATABASE_URL: '', DATA_DIR: dataDir });
    const again = await server.api(`/v1/calls/${callId}`);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: callId, endReason: 'stream_stopped' });
  }, 60_000);
});
