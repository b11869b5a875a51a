import { mulawFrame as frame, startedMediaStreamSession as started } from '@switchboard/testing';
import type { OutboundFrameSink } from './outbound-frames';
import { OutboundPacer } from './outbound-pacer';
import { PacingTicker } from './pacing-ticker';

/** A clock the test moves, and a ticker whose beats the test calls (its own timer never fires in time). */
function pacedWire(maxLeadMs = 100, refillMs?: number) {
  let nowMs = 1000;
  const ticker = new PacingTicker(1_000_000);
  const sent: string[] = [];
  const wire: OutboundFrameSink = {
    sendFrame: (bytes) => sent.push(`f${bytes[0]}`),
    sendMark: (name, position) => sent.push(`m:${name}@${position}`),
  };
  const pacer = new OutboundPacer(wire, { maxLeadMs, bytesPerMs: 8, now: () => nowMs, ticker, refillMs });
  return {
    pacer,
    ticker,
    sent,
    advance(ms: number) {
      nowMs += ms;
      ticker.beat();
    },
  };
}

describe('OutboundPacer: the agent speaks at most the lead ahead of the caller', () => {
  it('sends the first frames at once, up to the lead, and the rest in refills as playback makes room', () => {
    const { pacer, ticker, sent, advance } = pacedWire(100);
    for (let i = 1; i <= 8; i++) pacer.sendFrame(frame(i));
    // 100 ms of lead holds five 20 ms frames: they leave at once (no added latency), three wait.
    expect(sent).toEqual(['f1', 'f2', 'f3', 'f4', 'f5']);
    expect(pacer.waitingMs).toBe(60);
    expect(pacer.leadMs).toBe(100);
    expect(ticker.size).toBe(1);
    // Topped up once the lead is down to its refill point (the refill is at most half the lead), then
    // with as much as fits, in one go: a write per refill, not one per frame.
    advance(49);
    expect(sent).toHaveLength(5);
    advance(1);
    expect(sent.slice(5)).toEqual(['f6', 'f7']);
    expect(pacer.leadMs).toBe(90);
    advance(39);
    expect(sent).toHaveLength(7);
    advance(1);
    expect(sent.slice(5)).toEqual(['f6', 'f7', 'f8']);
    expect(pacer.waitingMs).toBe(0);
    expect(ticker.size).toBe(0);
  });

  it('with refillMs 0, sends each waiting frame as soon as it fits', () => {
    const { pacer, sent, advance } = pacedWire(100, 0);
    for (let i = 1; i <= 8; i++) pacer.sendFrame(frame(i));
    advance(19);
    expect(sent).toHaveLength(5);
    advance(1);
    expect(sent.slice(5)).toEqual(['f6']);
    advance(40);
    expect(sent.slice(5)).toEqual(['f6', 'f7', 'f8']);
  });

  it('keeps a waiting frame intact although the framer reuses its buffer', () => {
    const { pacer, sent, advance } = pacedWire(20);
    const reused = frame(1);
    pacer.sendFrame(reused);
    reused.fill(2);
    pacer.sendFrame(reused);
    reused.fill(3);
    advance(20);
    expect(sent).toEqual(['f1', 'f2']);
  });

  it('keeps a mark at its place in the audio: after the frames queued before it, before those after it', () => {
    const { pacer, sent, advance } = pacedWire(40);
    pacer.sendFrame(frame(1));
    pacer.sendMark('a', 160);
    pacer.sendFrame(frame(2));
    pacer.sendFrame(frame(3));
    pacer.sendMark('b', 480);
    pacer.sendFrame(frame(4));
    expect(sent).toEqual(['f1', 'm:a@160', 'f2']);
    advance(20);
    expect(sent.slice(3)).toEqual(['f3', 'm:b@480']);
    advance(20);
    expect(sent.slice(5)).toEqual(['f4']);
  });

  it('starts the playback clock again when the peer ran dry, so a pause costs the next utterance no latency', () => {
    const { pacer, sent, advance } = pacedWire(40);
    pacer.sendFrame(frame(1));
    pacer.sendFrame(frame(2));
    advance(5_000);
    expect(pacer.leadMs).toBe(0);
    pacer.sendFrame(frame(3));
    pacer.sendFrame(frame(4));
    expect(sent).toEqual(['f1', 'f2', 'f3', 'f4']);
  });

  it('drops what waits on discard and names its marks oldest first; after a clear the peer is empty again', () => {
    const { pacer, ticker, sent, advance } = pacedWire(20);
    pacer.sendFrame(frame(1));
    pacer.sendFrame(frame(2));
    pacer.sendMark('x', 320);
    pacer.sendFrame(frame(3));
    pacer.sendMark('y', 480);
    expect(pacer.discard()).toEqual(['x', 'y']);
    expect(ticker.size).toBe(0);
    pacer.peerCleared();
    pacer.sendFrame(frame(4));
    advance(1_000);
    expect(sent).toEqual(['f1', 'f4']);
  });

  it('one beat serves every waiting call; a call whose socket throws is dropped, the others go on', () => {
    let nowMs = 0;
    const failures: unknown[] = [];
    const ticker = new PacingTicker(1_000_000, (error) => failures.push(error));
    const good: number[] = [];
    const healthy = new OutboundPacer({ sendFrame: (bytes) => good.push(bytes[0]!), sendMark: () => undefined }, { maxLeadMs: 20, bytesPerMs: 8, now: () => nowMs, ticker });
    let throwing = false;
    const broken = new OutboundPacer(
      {
        sendFrame: () => {
          if (throwing) throw new Error('socket gone');
        },
        sendMark: () => undefined,
      },
      { maxLeadMs: 20, bytesPerMs: 8, now: () => nowMs, ticker },
    );
      for (let i = 1; i <= 3; i++) {
        healthy.sendFrame(frame(i));
        broken.sendFrame(frame(i));
      }
      throwing = true;
      nowMs += 20;
      ticker.beat();
      expect(good).toEqual([1, 2]);
      expect(broken.waitingMs).toBe(0);
      expect(ticker.size).toBe(1);
      nowMs += 20;
      ticker.beat();
      expect(good).toEqual([1, 2, 3]);
      expect(ticker.size).toBe(0);
    expect(failures.map((error) => (error as Error).message)).toEqual(['socket gone']);
  });
});

describe('MediaStreamSession paced: clear drops only what waits', () => {
  const events = (context: ReturnType<typeof started>) => context.sentMessages().map((m) => (m.event === 'mark' ? `mark:${m.mark?.name}` : m.event));

  it('never sends what waited once a clear came, and reports its marks cleared after the sent ones, in order', () => {
    let nowMs = 0;
    const ticker = new PacingTicker(1_000_000);
    const context = started({ pacing: { maxLeadMs: 40, now: () => nowMs, ticker } });
    const { session, twilio, handler } = context;
    session.sendAudio(frame(1, 160));
    session.sendMark('heard');
    session.sendAudio(frame(2, 320));
    session.sendMark('waiting');
    session.sendAudio(frame(3, 40));
    session.sendMark('deferred');
    expect(events(context)).toEqual(['media', 'mark:heard', 'media']);
    expect(session.waitingOutboundMs).toBe(20);
    session.clear();
    nowMs += 1_000;
    ticker.beat();
    expect(events(context)).toEqual(['media', 'mark:heard', 'media', 'clear']);
    expect(session.counters).toMatchObject({ mediaFramesOut: 2, marksSent: 1, marksNeverSent: 2 });
    session.receive(twilio.mark('heard'));
    expect(handler.marks.map(({ name, wasCleared }) => [name, wasCleared])).toEqual([
      ['heard', true],
      ['waiting', true],
      ['deferred', true],
    ]);
    // The caller's buffer was emptied: the next reply's first frames leave at once.
    session.sendAudio(frame(4, 320));
    expect(events(context).slice(4)).toEqual(['media', 'media']);
  });

  it('drops what waits when the stream stops', () => {
    let nowMs = 0;
    const ticker = new PacingTicker(1_000_000);
    const context = started({ pacing: { maxLeadMs: 20, now: () => nowMs, ticker } });
    context.session.sendAudio(frame(1, 480));
    context.session.receive(context.twilio.stop());
    nowMs += 1_000;
    ticker.beat();
    expect(context.sentAudio()).toHaveLength(1);
    expect(ticker.size).toBe(0);
  });
});
