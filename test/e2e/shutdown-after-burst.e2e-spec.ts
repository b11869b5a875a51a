import { Client } from 'pg';
import { encodeMulaw, sineTone } from '@switchboard/audio';
import { testDatabaseUrl } from '../support/database';
import { startTestServer, type TestServer } from '../support/test-server';

/**
 * Closing the server the moment a burst of callers has hung up, on a pool of two connections:
 * every call's end is still queueing for a connection when the shutdown begins. The shutdown must
 * wait for those ends and store them all, then close the pool and return. It used to close the
 * database first: the ends waiting for a connection were cancelled (or took one and left it idle
 * in a transaction), so close() hung until Postgres killed the sessions and ends were lost.
 * Checked in the database itself, since the server's API is gone once it closed.
 */
const CALLS = 40;

describe('Closing the server right after a burst of calls on a pool of 2 (e2e)', () => {
  let server: TestServer | undefined;
  let database: Client;

  beforeAll(async () => {
    database = new Client({ connectionString: testDatabaseUrl() });
    await database.connect();
  });

  afterAll(async () => {
    await server?.close();
    await database?.end();
  });

  it('stores every call end before closing, and close returns', async () => {
    const running = await startTestServer({ DATABASE_POOL_MAX: '2' });
    server = running;
    const audio = encodeMulaw(sineTone({ frequencyHz: 440, durationMs: 600, sampleRate: 8000, amplitudeDbfs: -12 }));
    const results = await Promise.all(
      Array.from({ length: CALLS }, (_, i) => running.callEcho({ from: `+1555020${String(i).padStart(4, '0')}`, audio, trailingSilenceMs: 200 })),
    );
    // Closed as soon as the callers are gone, with their ends in flight. A close that hangs fails
    // this test by its timeout.
    server = undefined;
    await running.close();

    expect(results.filter((result) => result.rejected)).toEqual([]);
    const callIds = results.map((result) => result.twiml?.stream?.parameters['callId'] as string);
    const { rows } = await database.query<{ id: string; ended_at: Date | null; end_reason: string | null }>(
      'SELECT id, ended_at, end_reason FROM calls WHERE id = ANY($1::uuid[])',
      [callIds],
    );
    expect(rows).toHaveLength(CALLS);
    expect(rows.filter((row) => row.ended_at === null).map((row) => row.id)).toEqual([]);
    expect(rows.map((row) => row.end_reason)).toEqual(Array(CALLS).fill('stream_stopped'));
  }, 60_000);
});
