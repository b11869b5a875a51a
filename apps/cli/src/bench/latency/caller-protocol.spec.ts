/**
 * The caller thread's clock conversion (a barge-in is timed from a caller-thread instant to a
 * main-thread one) and the request/answer bookkeeping both threads use over their port.
 */
import { MessageChannel, Worker } from 'node:worker_threads';
import { callOutcomeTimeoutMs, clockAnchor, clockOffsetMs, PendingReplies, toMainClock, type ClockAnchor } from './caller-protocol';

describe('clockOffsetMs / toMainClock', () => {
  it('maps a caller-thread time onto main by the difference of the time origins', () => {
    const main: ClockAnchor = { timeOriginMs: 1_700_000_000_000, monotonicOriginMs: 5_000 };
    const caller: ClockAnchor = { timeOriginMs: 1_700_000_000_250.5, monotonicOriginMs: 5_250.5 };
    const { offsetMs, disagreementMs } = clockOffsetMs(caller, main);
    expect(offsetMs).toBeCloseTo(250.5, 9);
    expect(disagreementMs).toBeCloseTo(0, 9);
    // 10 ms after the caller thread's origin is 260.5 ms after main's.
    expect(toMainClock(10, offsetMs)).toBeCloseTo(260.5, 9);
    expect(toMainClock(undefined, offsetMs)).toBeUndefined();
  });

  it('says how far the monotonic clock disagrees (a wall clock stepped between the anchors)', () => {
    const main: ClockAnchor = { timeOriginMs: 1_000, monotonicOriginMs: 0 };
    const caller: ClockAnchor = { timeOriginMs: 1_100, monotonicOriginMs: 40 };
    expect(clockOffsetMs(caller, main)).toEqual({ offsetMs: 100, disagreementMs: 60 });
  });

  it('puts a real worker thread instant between main instants it must lie between', async () => {
    const before = performance.now();
    const mainClock = clockAnchor();
    // The worker reads its anchor with the same module (ts-node, as the caller thread does), then stamps its send.
    const worker = new Worker(
      [
        `require(${JSON.stringify(require.resolve('ts-node'))}).register({ transpileOnly: true, compilerOptions: { module: 'commonjs' } });`,
        `const { clockAnchor } = require(${JSON.stringify(require.resolve('./caller-protocol'))});`,
        `const { parentPort } = require('node:worker_threads');`,
        `const clock = clockAnchor();`,
        `parentPort.postMessage({ clock, sentAtMs: performance.now() });`,
      ].join('\n'),
      { eval: true },
    );
    try {
      const { clock, sentAtMs } = await new Promise<{ clock: ClockAnchor; sentAtMs: number }>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      const receivedAt = performance.now();
      const { offsetMs, disagreementMs } = clockOffsetMs(clock, mainClock);
      const sentOnMain = toMainClock(sentAtMs, offsetMs)!;
      expect(sentOnMain).toBeGreaterThanOrEqual(before);
      expect(sentOnMain).toBeLessThanOrEqual(receivedAt);
      // Both methods agree to well under a millisecond (only the anchors' own two reads differ).
      expect(disagreementMs).toBeLessThan(1);
    } finally {
      await worker.terminate();
    }
  }, 30_000);
});

describe('PendingReplies over a real MessagePort', () => {
  let channel: MessageChannel;

  beforeEach(() => {
    channel = new MessageChannel();
  });

  afterEach(() => {
    channel.port1.close();
    channel.port2.close();
  });

  /** The far side: answers each request with its id and the doubled value, in reverse order of arrival. */
  function answerInReverse(count: number): void {
    const received: { requestId: number; value: number }[] = [];
    channel.port2.on('message', (request: { requestId: number; value: number }) => {
      received.push(request);
      if (received.length < count) return;
      for (const { requestId, value } of received.reverse()) channel.port2.postMessage({ requestId, answer: value * 2 });
    });
  }

  it('matches answers to requests by id, whatever their order', async () => {
    const replies = new PendingReplies<number>();
    channel.port1.on('message', (reply: { requestId: number; answer: number }) => replies.settle(reply.requestId, reply.answer));
    answerInReverse(3);
    const answers = await Promise.all([1, 2, 3].map((value) => replies.request((requestId) => channel.port1.postMessage({ requestId, value }), 10_000, 'no answer')));
    expect(answers).toEqual([2, 4, 6]);
    expect(replies.size).toBe(0);
  });

  it('rejects with the given message when no answer comes in time, and ignores a late one', async () => {
    const replies = new PendingReplies<number>();
    let sentId = -1;
    await expect(replies.request((requestId) => (sentId = requestId), 20, 'main never answered')).rejects.toThrow('main never answered');
    replies.settle(sentId, 42);
    expect(replies.size).toBe(0);
  });

  it('rejects with an Error answer, and fails everything pending at once when the other side goes', async () => {
    const replies = new PendingReplies<void>();
    let sentId = -1;
    const failed = replies.request((requestId) => (sentId = requestId), 10_000, 'timeout');
    replies.settle(sentId, new Error('no reply 2 within 20000 ms (1 so far)'));
    await expect(failed).rejects.toThrow('no reply 2 within 20000 ms');

    const first = replies.request(() => undefined, 10_000, 'timeout');
    const second = replies.request(() => undefined, 10_000, 'timeout');
    replies.failAll(new Error('caller thread exited (code 1)'));
    await expect(first).rejects.toThrow('caller thread exited');
    await expect(second).rejects.toThrow('caller thread exited');
    expect(replies.size).toBe(0);
  });

  it('rejects when the request cannot even be sent', async () => {
    const replies = new PendingReplies<void>();
    await expect(
      replies.request(
        () => {
          throw new Error('caller thread was closed');
        },
        10_000,
        'timeout',
      ),
    ).rejects.toThrow('caller thread was closed');
    expect(replies.size).toBe(0);
  });
});

describe('callOutcomeTimeoutMs', () => {
  it('covers every bounded step of the script, so main gives up only on a thread that stopped answering', () => {
    // 2 questions: connect, 2 x (utterance + wait), the barge-in question, its first frame, the barge-in, its reply.
    const stepsAtMost = 1 + 2 * 2 + 4;
    expect(callOutcomeTimeoutMs(2, 20_000, 5_000)).toBeGreaterThanOrEqual(stepsAtMost * 20_000 + 5_000);
    expect(callOutcomeTimeoutMs(20, 20_000, 5_000)).toBeGreaterThan(callOutcomeTimeoutMs(2, 20_000, 5_000));
  });
});
