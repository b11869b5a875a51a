import {
  connectedMessage,
  dtmfMessage,
  markEchoMessage,
  mediaMessage,
  parseServerMessage,
  startMessage,
  stopMessage,
} from './twilio-stream-messages';

const identity = {
  accountSid: 'AC' + 'a'.repeat(32),
  callSid: 'CA' + 'b'.repeat(32),
  streamSid: 'MZ' + 'c'.repeat(32),
};

describe('messages Twilio sends', () => {
  it('match the protocol reference, with every number as a string', () => {
    expect(JSON.parse(connectedMessage())).toEqual({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    expect(JSON.parse(startMessage(1, identity, { token: 't' }))).toEqual({
      event: 'start',
      sequenceNumber: '1',
      streamSid: identity.streamSid,
      start: {
        accountSid: identity.accountSid,
        streamSid: identity.streamSid,
        callSid: identity.callSid,
        tracks: ['inbound'],
        customParameters: { token: 't' },
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
    });
    expect(JSON.parse(mediaMessage(2, identity.streamSid, 1, 20, 'AAAA'))).toEqual({
      event: 'media',
      sequenceNumber: '2',
      streamSid: identity.streamSid,
      media: { track: 'inbound', chunk: '1', timestamp: '20', payload: 'AAAA' },
    });
    expect(JSON.parse(dtmfMessage(9, identity.streamSid, '5'))).toEqual({
      event: 'dtmf',
      sequenceNumber: '9',
      streamSid: identity.streamSid,
      dtmf: { track: 'inbound_track', digit: '5' },
    });
    expect(JSON.parse(markEchoMessage(10, identity.streamSid, 'r7:1840'))).toEqual({
      event: 'mark',
      sequenceNumber: '10',
      streamSid: identity.streamSid,
      mark: { name: 'r7:1840' },
    });
    expect(JSON.parse(stopMessage(99, identity))).toEqual({
      event: 'stop',
      sequenceNumber: '99',
      streamSid: identity.streamSid,
      stop: { accountSid: identity.accountSid, callSid: identity.callSid },
    });
  });
});

describe('parseServerMessage', () => {
  const sid = identity.streamSid;

  it('accepts media (decoding the payload), mark and clear', () => {
    const payload = Buffer.from([0xff, 0x7f, 0x00, 0x10]).toString('base64');
    const media = parseServerMessage(JSON.stringify({ event: 'media', streamSid: sid, media: { payload } }), sid);
    expect(media.ok && media.message.event === 'media' && [...media.message.payload]).toEqual([0xff, 0x7f, 0x00, 0x10]);
    expect(parseServerMessage(JSON.stringify({ event: 'mark', streamSid: sid, mark: { name: 'm1' } }), sid)).toEqual({
      ok: true,
      message: { event: 'mark', name: 'm1' },
    });
    expect(parseServerMessage(JSON.stringify({ event: 'clear', streamSid: sid }), sid)).toEqual({
      ok: true,
      message: { event: 'clear' },
    });
  });

  it.each([
    ['invalid JSON', '{"event":', /not JSON/],
    ['a JSON array', '[1,2]', /not a JSON object/],
    ['a missing streamSid', JSON.stringify({ event: 'clear' }), /streamSid/],
    ['another stream\'s sid', JSON.stringify({ event: 'clear', streamSid: 'MZ' + 'd'.repeat(32) }), /streamSid/],
    ['an unknown event', JSON.stringify({ event: 'play', streamSid: sid }), /unknown event/],
    ['media without payload', JSON.stringify({ event: 'media', streamSid: sid, media: {} }), /payload/],
    ['media with non-base64 payload', JSON.stringify({ event: 'media', streamSid: sid, media: { payload: 'ab$d' } }), /payload/],
    ['media with a truncated base64 payload', JSON.stringify({ event: 'media', streamSid: sid, media: { payload: 'abc' } }), /payload/],
    ['a mark without a name', JSON.stringify({ event: 'mark', streamSid: sid, mark: {} }), /mark.name/],
  ])('reports %s as a protocol error', (_label, text, pattern) => {
    const result = parseServerMessage(text, sid);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toMatch(pattern);
  });
});
