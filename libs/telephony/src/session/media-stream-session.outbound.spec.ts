import { HARNESS_STREAM_SID as STREAM_SID, mulawFrame as frame, setupMediaStreamSession as setup, startedMediaStreamSession as started } from '@switchboard/testing';

describe('MediaStreamSession: outbound', () => {
  it('refuses to send anything before start', () => {
    const { session, sent } = setup();
    expect(session.sendAudio(frame(1))).toBe(false);
    expect(session.sendMark('m1')).toBe(false);
    expect(session.clear()).toBe(false);
    expect(session.endOfUtterance()).toBe(false);
    expect(sent).toEqual([]);
    expect(session.counters.sendsRefused).toBe(4);
  });

  it('frames audio into 160-byte media messages and holds the remainder until the end of the utterance', () => {
    const { session, sentAudio, sentMessages } = started();
    const audio = new Uint8Array(400).map((_, i) => i % 200);
    expect(session.sendAudio(audio)).toBe(true);
    expect(sentAudio()).toEqual([[...audio.subarray(0, 160)], [...audio.subarray(160, 320)]]);
    expect(session.pendingOutboundBytes).toBe(80);
    expect(sentMessages().every((m) => m.streamSid === STREAM_SID)).toBe(true);

    session.endOfUtterance();
    const third = sentAudio()[2];
    expect(third).toEqual([...audio.subarray(320), ...new Array(80).fill(0xff)]);
    expect(session.counters).toMatchObject({ mediaFramesOut: 3, mediaBytesOut: 480, paddingBytesOut: 80 });
  });

  it('sends a mark after all audio queued before it (the partial frame is not padded for it)', () => {
    const { session, sentMessages } = started();
    session.sendAudio(frame(5, 200));
    session.sendMark('r1:200');
    expect(sentMessages().map((m) => m.event)).toEqual(['media']);
    expect(session.deferredMarks).toEqual(['r1:200']);
    session.endOfUtterance();
    expect(sentMessages().map((m) => m.event)).toEqual(['media', 'media', 'mark']);
    expect(sentMessages()[2]).toEqual({ event: 'mark', streamSid: STREAM_SID, mark: { name: 'r1:200' } });
    expect(session.outstandingMarks).toEqual(['r1:200']);
    expect(session.sendMark('')).toBe(false);
  });

  it('reports echoed marks as played, in order', () => {
    const { session, handler, twilio } = started();
    session.sendMark('a');
    session.sendMark('b');
    session.receive(twilio.mark('a'));
    session.receive(twilio.mark('b'));
    expect(handler.marks).toEqual([
      { name: 'a', wasCleared: false, sequenceNumber: 2 },
      { name: 'b', wasCleared: false, sequenceNumber: 3 },
    ]);
    expect(session.outstandingMarks).toEqual([]);
    expect(session.counters).toMatchObject({ marksSent: 2, marksEchoed: 2 });
  });

  it('counts audio as heard only up to the latest mark echoed as played', () => {
    const { session, twilio } = started();
    session.sendAudio(frame(1, 320)); // 2 frames
    session.sendMark('first');
    session.sendAudio(frame(2, 480)); // 3 frames
    session.sendMark('second');
    session.sendAudio(frame(3, 160)); // 1 frame, never confirmed
    expect(session.counters).toMatchObject({ mediaBytesOut: 960, mediaBytesHeard: 0 });
    session.receive(twilio.mark('first'));
    expect(session.counters.mediaBytesHeard).toBe(320);
    session.receive(twilio.mark('second'));
    expect(session.counters.mediaBytesHeard).toBe(800);

    // Barge-in: the audio before a cleared mark was discarded, not played.
    session.sendAudio(frame(4, 800));
    session.sendMark('third');
    session.clear();
    session.receive(twilio.mark('third'));
    expect(session.counters).toMatchObject({ mediaBytesOut: 1760, mediaBytesHeard: 800 });
  });

  it('clear drops pending audio and flags outstanding marks as cleared', () => {
    const { session, handler, twilio, sentMessages } = started();
    session.sendAudio(frame(1, 160));
    session.sendMark('before-1');
    session.sendMark('before-2');
    session.sendAudio(frame(2, 100));
    expect(session.clear()).toBe(true);
    expect(session.pendingOutboundBytes).toBe(0);
    session.sendMark('after');
    expect(sentMessages().map((m) => m.event)).toEqual(['media', 'mark', 'mark', 'clear', 'mark']);

    // Twilio echoes every outstanding mark at once after a clear, then later ones as they play.
    session.receive(twilio.mark('before-1'));
    session.receive(twilio.mark('before-2'));
    session.receive(twilio.mark('after'));
    expect(handler.marks.map(({ name, wasCleared }) => ({ name, wasCleared }))).toEqual([
      { name: 'before-1', wasCleared: true },
      { name: 'before-2', wasCleared: true },
      { name: 'after', wasCleared: false },
    ]);
    expect(session.counters.clearsSent).toBe(1);
  });

  it('reports a mark it never sent, and one echoed ahead of older marks', () => {
    const { session, handler, twilio } = started();
    session.receive(twilio.mark('ghost'));
    session.sendMark('first');
    session.sendMark('second');
    session.receive(twilio.mark('second'));
    expect(handler.errorCodes()).toEqual(['unknown_mark', 'mark_out_of_order']);
    expect(handler.marks.map((m) => m.name)).toEqual(['second']);
    expect(session.outstandingMarks).toEqual(['first']);
  });

  it('refuses sends after stop or once the transport is closed', () => {
    const first = started();
    first.session.receive(first.twilio.stop());
    expect(first.session.sendAudio(frame(1))).toBe(false);
    const second = started();
    second.session.markTransportClosed();
    expect(second.session.sendMark('x')).toBe(false);
    expect(first.sent).toEqual([]);
    expect(second.sent).toEqual([]);
  });

  it('supports larger outbound frames and refuses sizes that are not multiples of 160', () => {
    const { session, twilio, sentAudio } = setup({ outboundFrameBytes: 320 });
    session.receive(twilio.connected());
    session.receive(twilio.start());
    session.sendAudio(frame(7, 700));
    expect(sentAudio().map((bytes) => bytes.length)).toEqual([320, 320]);
    expect(() => setup({ outboundFrameBytes: 100 })).toThrow(RangeError);
  });
});
