import { FakeTwilio, HARNESS_ACCOUNT_SID as ACCOUNT_SID, HARNESS_CALL_SID as CALL_SID, HARNESS_STREAM_SID as STREAM_SID, HARNESS_STREAM_TOKEN as TOKEN, mulawFrame as frame, setupMediaStreamSession as setup, startedMediaStreamSession as started } from '@switchboard/testing';

describe('MediaStreamSession: inbound', () => {
  it('walks connected -> start -> media/dtmf/mark -> stop and reports each step', () => {
    const { session, handler, twilio } = setup();
    expect(session.state).toBe('awaiting_connected');
    session.receive(twilio.connected());
    expect(session.state).toBe('awaiting_start');
    session.receive(twilio.start());
    expect(session.state).toBe('streaming');
    expect(handler.starts).toEqual([
      {
        streamSid: STREAM_SID,
        callSid: CALL_SID,
        accountSid: ACCOUNT_SID,
        customParameters: { callId: 'call-1', streamToken: TOKEN },
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
        tracks: ['inbound'],
        sequenceNumber: 1,
      },
    ]);
    expect(session.streamSid).toBe(STREAM_SID);
    expect(session.callSid).toBe(CALL_SID);

    session.receive(twilio.media(frame(0x11)));
    session.receive(twilio.media(frame(0x22, 80)));
    session.receive(twilio.dtmf('#'));
    session.receive(twilio.stop());

    expect(handler.media.map(({ payload, timestampMs, chunk, sequenceNumber }) => ({ payload, timestampMs, chunk, sequenceNumber }))).toEqual([
      { payload: [...frame(0x11)], timestampMs: 20, chunk: 1, sequenceNumber: 2 },
      { payload: [...frame(0x22, 80)], timestampMs: 40, chunk: 2, sequenceNumber: 3 },
    ]);
    expect(handler.dtmf).toEqual([{ digit: '#', sequenceNumber: 4 }]);
    expect(handler.stops).toEqual([{ accountSid: ACCOUNT_SID, callSid: CALL_SID, sequenceNumber: 5 }]);
    expect(session.state).toBe('stopped');
    expect(handler.errors).toEqual([]);
    expect(session.counters).toMatchObject({ messagesIn: 6, mediaFramesIn: 2, mediaBytesIn: 240, protocolErrors: 0, messagesDropped: 0 });
  });

  it('reuses one payload buffer (and view) for same-sized frames', () => {
    const { session, handler, twilio } = started();
    session.receive(twilio.media(frame(1)));
    session.receive(twilio.media(frame(2)));
    expect(handler.media[0]?.view).toBe(handler.media[1]?.view);
    expect(handler.media[1]?.payload).toEqual([...frame(2)]);
  });

  it('hands out a plain Uint8Array, so slice() is a copy that the next frame does not overwrite', () => {
    const { session, handler, twilio } = started();
    session.receive(twilio.media(frame(1)));
    const kept = handler.media[0]!.view.slice();
    session.receive(twilio.media(frame(2)));
    // A Buffer's slice() is a view: frames "copied" with it would all read as the latest one.
    expect(Buffer.isBuffer(handler.media[0]!.view)).toBe(false);
    expect([...kept]).toEqual([...frame(1)]);
  });

  it('grows the payload buffer for an unusually large frame', () => {
    const { session, handler, twilio } = started();
    const big = new Uint8Array(4000).map((_, i) => i % 256);
    session.receive(twilio.media(big));
    session.receive(twilio.media(frame(9)));
    expect(handler.media.map((m) => m.payload.length)).toEqual([4000, 160]);
    expect(handler.media[0]?.payload).toEqual([...big]);
    expect(handler.errors).toEqual([]);
  });

  it('reports media before start, drops it, and still works once start arrives', () => {
    const { session, handler, twilio } = setup();
    session.receive(twilio.connected());
    session.receive(new FakeTwilio().media(frame(1)));
    expect(handler.errorCodes()).toEqual(['message_before_start']);
    expect(handler.errors[0]?.fatal).toBe(false);
    expect(handler.media).toHaveLength(0);
    session.receive(twilio.start());
    session.receive(twilio.media(frame(2)));
    expect(handler.media).toHaveLength(1);
    expect(session.counters.messagesDropped).toBe(1);
  });

  it('reports start without connected but still starts', () => {
    const { session, handler, twilio } = setup();
    session.receive(twilio.start());
    expect(handler.errorCodes()).toEqual(['missing_connected']);
    expect(handler.starts).toHaveLength(1);
    expect(session.state).toBe('streaming');
  });

  it('reports a second start without restarting, and keeps the token out of the excerpt', () => {
    const { session, handler, twilio } = started();
    session.receive(twilio.start());
    expect(handler.errorCodes()).toEqual(['duplicate_start']);
    expect(handler.starts).toHaveLength(1);
    expect(handler.errors[0]?.rawExcerpt).not.toContain(TOKEN);
    expect(handler.errors[0]?.rawExcerpt).toContain('"event":"start"');
    session.receive(twilio.connected());
    expect(handler.errorCodes()).toEqual(['duplicate_start', 'duplicate_connected']);
  });

  it('drops messages for another stream', () => {
    const { session, handler } = started();
    session.receive(new FakeTwilio('MZ00000000000000000000000000000000').media(frame(1), { sequenceNumber: 2 }));
    expect(handler.errorCodes()).toEqual(['stream_sid_mismatch']);
    expect(handler.media).toHaveLength(0);
  });

  it('reports and drops messages after stop', () => {
    const { session, handler, twilio } = started();
    session.receive(twilio.stop());
    session.receive(twilio.media(frame(1)));
    session.receive(twilio.stop());
    expect(handler.errorCodes()).toEqual(['message_after_stop', 'message_after_stop']);
    expect(handler.stops).toHaveLength(1);
    expect(handler.media).toHaveLength(0);
  });

  it('reports malformed frames with their parse code and carries on', () => {
    const { session, handler, twilio } = started();
    session.receive('{not json');
    session.receive(`{"event":"transcript","streamSid":"${STREAM_SID}"}`);
    session.receive(`{"event":"media","sequenceNumber":"2","streamSid":"${STREAM_SID}","media":{"chunk":"1","timestamp":"20"}}`);
    session.receive(twilio.media(frame(3)));
    expect(handler.errorCodes()).toEqual(['invalid_json', 'unknown_event', 'schema_violation']);
    expect(handler.errors[2]?.message).toContain('media.payload');
    expect(handler.media).toHaveLength(1);
    expect(session.counters).toMatchObject({ protocolErrors: 3, messagesDropped: 3, mediaFramesIn: 1 });
  });

  it('reports a corrupt payload and drops only that frame', () => {
    const { session, handler, twilio } = started();
    session.receive(twilio.media(frame(1), { payload: 'AAA*' }));
    session.receive(twilio.media(frame(2)));
    expect(handler.errorCodes()).toEqual(['invalid_media_payload']);
    expect(handler.media.map((m) => m.payload[0])).toEqual([2]);
  });

  it('reports a sequence gap but delivers the message', () => {
    const { session, handler, twilio } = started();
    session.receive(twilio.media(frame(1))); // 2
    twilio.skip(2); // 3 and 4 never arrive
    session.receive(twilio.media(frame(2))); // 5
    session.receive(twilio.media(frame(3))); // 6
    expect(handler.errorCodes()).toEqual(['sequence_gap']);
    expect(handler.errors[0]?.message).toContain('from 2 to 5');
    expect(handler.media.map((m) => m.sequenceNumber)).toEqual([2, 5, 6]);
    expect(session.counters).toMatchObject({ sequenceGaps: 1, missingMessages: 2, sequenceDuplicates: 0 });
  });

  it('drops replayed sequence numbers, except a stop', () => {
    const { session, handler, twilio } = started();
    const replayed = twilio.media(frame(1)); // 2
    session.receive(replayed);
    session.receive(replayed);
    session.receive(twilio.dtmf('1')); // 3
    session.receive(twilio.stop(3));
    expect(handler.errorCodes()).toEqual(['sequence_out_of_order', 'sequence_out_of_order']);
    expect(handler.media).toHaveLength(1);
    expect(handler.dtmf).toHaveLength(1);
    expect(handler.stops).toHaveLength(1);
    expect(session.counters.sequenceDuplicates).toBe(2);
  });

  it('treats an unsupported media format as fatal and then ignores the stream quietly', () => {
    const { session, handler, twilio } = setup();
    session.receive(twilio.connected());
    session.receive(twilio.start({ encoding: 'audio/l16', sampleRate: 16000, channels: 1 }));
    expect(handler.errors).toHaveLength(1);
    expect(handler.errors[0]).toMatchObject({ code: 'unsupported_media_format', fatal: true });
    expect(handler.errors[0]?.message).toContain('audio/l16 16000 Hz');
    expect(handler.starts).toHaveLength(0);
    expect(session.state).toBe('failed');
    session.receive(twilio.media(frame(1)));
    session.receive(twilio.stop());
    expect(handler.errors).toHaveLength(1);
    expect(handler.media).toHaveLength(0);
    expect(session.counters.messagesDropped).toBe(3);
  });

  it('ignores inbound frames once the transport is closed', () => {
    const { session, handler, twilio } = started();
    session.markTransportClosed();
    session.receive(twilio.media(frame(1)));
    expect(handler.media).toHaveLength(0);
    expect(handler.errors).toHaveLength(0);
    expect(session.state).toBe('closed');
  });
});
