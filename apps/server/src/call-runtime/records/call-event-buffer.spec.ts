import type { PinoLogger } from 'nestjs-pino';
import { CallEventBuffer, type PendingCallEvent } from './call-event-buffer';

const silentLogger = { error: () => undefined, warn: () => undefined } as unknown as PinoLogger;

/** An event store that is down until `up` is set, recording what it stored. */
class FlakyEventStore {
  up = false;
  attempts = 0;
  readonly stored: PendingCallEvent[] = [];
  async appendMany(_callId: string, events: readonly PendingCallEvent[]): Promise<void> {
    this.attempts += 1;
    if (!this.up) throw new Error("Can't reach database server");
    this.stored.push(...events);
  }
}

describe('CallEventBuffer', () => {
  afterEach(() => jest.useRealTimers());

  it('keeps a closed call\'s events when the database is down, and writes them, in order, once it is back', async () => {
    jest.useFakeTimers();
    const store = new FlakyEventStore();
    const buffer = new CallEventBuffer('call-1', store, silentLogger);
    buffer.add('stream_started', { n: 1 });
    buffer.add('dtmf', { digit: '5' });
    buffer.add('stream_closed', { reason: 'stream_stopped' });
    await buffer.close();
    expect(store.stored).toEqual([]);
    expect(buffer.pendingCount).toBe(3);

    // Still down for a while: retried with growing delays, nothing lost.
    await jest.advanceTimersByTimeAsync(2_000 + 4_000);
    expect(store.attempts).toBe(3);
    expect(buffer.pendingCount).toBe(3);

    store.up = true;
    await jest.advanceTimersByTimeAsync(8_000);
    expect(store.stored.map((event) => event.type)).toEqual(['stream_started', 'dtmf', 'stream_closed']);
    expect(buffer.pendingCount).toBe(0);
    // Written once: no timers left behind.
    const attempts = store.attempts;
    await jest.advanceTimersByTimeAsync(60_000);
    expect(store.attempts).toBe(attempts);
  });
});
