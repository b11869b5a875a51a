import { PersistenceError } from '@switchboard/persistence';
import { CallEndRetrier } from './call-end-retrier';
import type { CallEnd, CallEndService } from './call-end.service';

/** A CallEndService whose finalise fails with the given errors, in order, then succeeds. */
function endsFailingWith(errors: Error[]): { service: CallEndService; attempts: Array<{ callId: string; end: CallEnd }> } {
  const attempts: Array<{ callId: string; end: CallEnd }> = [];
  const service = {
    finalise: async (callId: string, end: CallEnd) => {
      attempts.push({ callId, end });
      const error = errors.shift();
      if (error !== undefined) throw error;
      return true;
    },
  } as unknown as CallEndService;
  return { service, attempts };
}

/** What the pg driver adapter throws while the database is down (retryable by its message). */
const outage = () => Object.assign(new Error("Raw query failed. Message: `Can't reach database server at 127.0.0.1:5432`"), { code: 'P2010' });

describe('CallEndRetrier: a call end is stored even when the database is down at hang-up', () => {
  const end: CallEnd = { endReason: 'stream_stopped', endedAt: new Date('2030-01-01T00:00:00Z') };

  it('retries an outage with backoff until the end lands, with the same end each time', async () => {
    const { service, attempts } = endsFailingWith([outage(), outage(), outage()]);
    await new CallEndRetrier(service).finaliseDurably('call-1', end);
    expect(attempts).toHaveLength(4);
    expect(new Set(attempts.map((attempt) => attempt.end))).toEqual(new Set([end]));
  });

  it('gives up at once on an error a retry cannot fix (the persistence layer said so)', async () => {
    const { service, attempts } = endsFailingWith([new PersistenceError('invalid_input', 'endReason must not be empty')]);
    await new CallEndRetrier(service).finaliseDurably('call-2', end);
    expect(attempts).toHaveLength(1);
  });

  it('runs one chain per call: a second end for a call already being retried waits for the first', async () => {
    const { service, attempts } = endsFailingWith([outage()]);
    const retrier = new CallEndRetrier(service);
    const first = retrier.finaliseDurably('call-3', end);
    const second = retrier.finaliseDurably('call-3', { ...end, endReason: 'connection_lost' });
    expect(retrier.pendingCount).toBe(1);
    await Promise.all([first, second]);
    expect(attempts.map((attempt) => attempt.end.endReason)).toEqual(['stream_stopped', 'stream_stopped']);
    expect(retrier.pendingCount).toBe(0);
  });

  it('makes one last attempt at shutdown instead of waiting out the backoff, then leaves the rest to the reconciler', async () => {
    const { service, attempts } = endsFailingWith(Array.from({ length: 50 }, outage));
    const retrier = new CallEndRetrier(service);
    const pending = retrier.finaliseDurably('call-4', end);
    while (attempts.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    const started = Date.now();
    await retrier.onApplicationShutdown();
    await pending;
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(retrier.pendingCount).toBe(0);
  });
});
