import { mulawFrame as frame, startedMediaStreamSession as started } from '@switchboard/testing';

/** Marks land on frame boundaries; only the end of an utterance pads. */
describe('MediaStreamSession: marks on frame boundaries', () => {
  const events = (context: ReturnType<typeof started>) => context.sentMessages().map((m) => (m.event === 'mark' ? `mark:${m.mark?.name}` : m.event));

  it('sends a mark at once when no partial frame is pending', () => {
    const context = started();
    context.session.sendAudio(frame(1, 320));
    context.session.sendMark('m1');
    expect(events(context)).toEqual(['media', 'media', 'mark:m1']);
    expect(context.session.deferredMarks).toEqual([]);
    expect(context.session.counters.paddingBytesOut).toBe(0);
  });

  it('defers a mark placed inside a partial frame until the frame that completes it, without padding', () => {
    const context = started();
    const { session } = context;
    session.sendAudio(frame(1, 100));
    session.sendMark('m1');
    expect(events(context)).toEqual([]);
    expect(session.deferredMarks).toEqual(['m1']);
    // 60 more bytes complete the frame: it goes out whole (the agent's own bytes), then the mark.
    session.sendAudio(frame(2, 300));
    expect(events(context)).toEqual(['media', 'mark:m1', 'media']);
    expect(context.sentAudio()[0]).toEqual([...new Array(100).fill(1), ...new Array(60).fill(2)]);
    expect(session.pendingOutboundBytes).toBe(80);
    expect(session.counters).toMatchObject({ paddingBytesOut: 0, marksSent: 1 });
  });

  it('counts a deferred mark as heard at the byte position where it was asked for, not at the frame end', () => {
    const context = started();
    const { session, twilio } = context;
    session.sendAudio(frame(1, 100));
    session.sendMark('m1');
    session.sendAudio(frame(2, 60));
    session.receive(twilio.mark('m1'));
    expect(session.counters).toMatchObject({ mediaBytesOut: 160, mediaBytesHeard: 100 });
  });

  it('keeps several deferred marks in order, each with its own position', () => {
    const context = started();
    const { session, twilio } = context;
    session.sendAudio(frame(1, 10));
    session.sendMark('a');
    session.sendAudio(frame(1, 20));
    session.sendMark('b');
    session.sendMark('c');
    expect(session.deferredMarks).toEqual(['a', 'b', 'c']);
    session.sendAudio(frame(1, 130));
    expect(events(context)).toEqual(['media', 'mark:a', 'mark:b', 'mark:c']);
    session.receive(twilio.mark('a'));
    expect(session.counters.mediaBytesHeard).toBe(10);
    session.receive(twilio.mark('b'));
    session.receive(twilio.mark('c'));
    expect(session.counters.mediaBytesHeard).toBe(30);
  });

  it('pads only at the end of an utterance, then sends the marks that waited for that frame', () => {
    const context = started();
    const { session } = context;
    session.sendAudio(frame(3, 170));
    session.sendMark('last');
    expect(session.endOfUtterance()).toBe(true);
    expect(events(context)).toEqual(['media', 'media', 'mark:last']);
    expect(context.sentAudio()[1]).toEqual([...new Array(10).fill(3), ...new Array(150).fill(0xff)]);
    expect(session.counters).toMatchObject({ paddingBytesOut: 150, mediaBytesOut: 320 });
  });

  it('adds nothing when an utterance ends exactly on a frame boundary', () => {
    const context = started();
    const { session } = context;
    session.sendAudio(frame(4, 161));
    session.sendAudio(frame(4, 159));
    session.sendMark('end');
    session.endOfUtterance();
    expect(events(context)).toEqual(['media', 'media', 'mark:end']);
    expect(session.counters).toMatchObject({ paddingBytesOut: 0, mediaBytesOut: 320 });
  });

  it('sends a mark placed after the end of an utterance at once (nothing is pending any more)', () => {
    const context = started();
    const { session } = context;
    session.sendAudio(frame(5, 50));
    session.endOfUtterance();
    session.sendMark('after');
    expect(events(context)).toEqual(['media', 'mark:after']);
    expect(session.deferredMarks).toEqual([]);
  });

  it('clear discards the remainder and the deferred marks, and reports those as cleared after the older echoes', () => {
    const context = started();
    const { session, twilio, handler } = context;
    session.sendAudio(frame(1, 160));
    session.sendMark('sent');
    session.sendAudio(frame(2, 40));
    session.sendMark('waiting-1');
    session.sendMark('waiting-2');
    session.clear();
    expect(events(context)).toEqual(['media', 'mark:sent', 'clear']);
    expect(session.pendingOutboundBytes).toBe(0);
    expect(session.deferredMarks).toEqual([]);
    expect(session.outstandingMarks).toEqual(['sent']);
    // Never reported from inside clear(): the agent is still handling its barge-in.
    expect(handler.marks).toEqual([]);

    // A frame arrives before Twilio's echo of the older mark: the never-sent ones must still wait.
    session.receive(twilio.media(frame(0xff)));
    expect(handler.marks).toEqual([]);
    session.receive(twilio.mark('sent'));
    expect(handler.marks.map(({ name, wasCleared, neverSent }) => ({ name, wasCleared, neverSent }))).toEqual([
      { name: 'sent', wasCleared: true, neverSent: undefined },
      { name: 'waiting-1', wasCleared: true, neverSent: true },
      { name: 'waiting-2', wasCleared: true, neverSent: true },
    ]);
    expect(session.counters).toMatchObject({ marksSent: 1, marksEchoed: 1, marksNeverSent: 2, mediaBytesHeard: 0 });
  });

  it('reports deferred marks cleared with nothing older outstanding at the next message, before anything newer', () => {
    const context = started();
    const { session, twilio, handler } = context;
    session.sendAudio(frame(1, 30));
    session.sendMark('waiting');
    session.clear();
    session.sendAudio(frame(2, 160));
    session.sendMark('next');
    expect(handler.marks).toEqual([]);
    session.receive(twilio.media(frame(0xff)));
    expect(handler.marks.map((mark) => [mark.name, mark.wasCleared])).toEqual([['waiting', true]]);
    session.receive(twilio.mark('next'));
    expect(handler.marks.map((mark) => [mark.name, mark.wasCleared])).toEqual([
      ['waiting', true],
      ['next', false],
    ]);
    expect(handler.errorCodes()).toEqual([]);
  });

  it('drops deferred marks without a report once the stream is stopped', () => {
    const context = started();
    const { session, twilio, handler } = context;
    session.sendAudio(frame(1, 30));
    session.sendMark('waiting');
    session.receive(twilio.stop());
    expect(session.deferredMarks).toEqual([]);
    expect(handler.marks).toEqual([]);
  });
});
