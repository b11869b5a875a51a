import {
  fastMediaMessage,
  inboundMessageSchemas,
  MAX_INBOUND_MESSAGE_CHARS,
  parseInboundMessage,
  type InboundParseResult,
} from './inbound-messages';

const STREAM_SID = 'MZ18ad3ab5a668481ce02b83e7395059f0';
const CALL_SID = 'CA5b8c5a5f2b6e1f0c2a1b0e9d8c7b6a5f';
const ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';

function expectOk(result: InboundParseResult) {
  if (!result.ok) throw new Error(`expected ok, got ${result.error.code}: ${result.error.message}`);
  return result.message;
}

function expectError(result: InboundParseResult) {
  if (result.ok) throw new Error(`expected an error, got a ${result.message.event} message`);
  return result.error;
}

function mediaFrameText(payloadBytes = 160): string {
  const payload = Buffer.alloc(payloadBytes, 0x7f).toString('base64');
  return JSON.stringify({
    event: 'media',
    sequenceNumber: '2',
    streamSid: STREAM_SID,
    media: { track: 'inbound', chunk: '1', timestamp: '20', payload },
  });
}

describe('parseInboundMessage', () => {
  it('parses connected', () => {
    const message = expectOk(parseInboundMessage('{"event":"connected","protocol":"Call","version":"1.0.0"}'));
    expect(message).toEqual({ event: 'connected', protocol: 'Call', version: '1.0.0' });
  });

  it('parses start, turning string counters into numbers and keeping custom parameters', () => {
    const text = JSON.stringify({
      event: 'start',
      sequenceNumber: '1',
      streamSid: STREAM_SID,
      start: {
        accountSid: ACCOUNT_SID,
        streamSid: STREAM_SID,
        callSid: CALL_SID,
        tracks: ['inbound'],
        customParameters: { callId: 'c-1', streamToken: 'tok' },
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
    });
    const message = expectOk(parseInboundMessage(text));
    expect(message).toEqual({
      event: 'start',
      sequenceNumber: 1,
      streamSid: STREAM_SID,
      start: {
        accountSid: ACCOUNT_SID,
        streamSid: STREAM_SID,
        callSid: CALL_SID,
        tracks: ['inbound'],
        customParameters: { callId: 'c-1', streamToken: 'tok' },
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
    });
  });

  it('defaults missing tracks and customParameters on start', () => {
    const text = JSON.stringify({
      event: 'start',
      sequenceNumber: '1',
      streamSid: STREAM_SID,
      start: { accountSid: ACCOUNT_SID, callSid: CALL_SID, mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: '8000', channels: '1' } },
    });
    const message = expectOk(parseInboundMessage(text));
    if (message.event !== 'start') throw new Error('expected start');
    expect(message.start.customParameters).toEqual({});
    expect(message.start.tracks).toEqual([]);
    expect(message.start.mediaFormat.sampleRate).toBe(8000);
  });

  it('parses media with numeric chunk/timestamp and leaves the payload as base64 text', () => {
    const message = expectOk(parseInboundMessage(mediaFrameText()));
    expect(message).toEqual({
      event: 'media',
      sequenceNumber: 2,
      streamSid: STREAM_SID,
      media: { track: 'inbound', chunk: 1, timestamp: 20, payload: Buffer.alloc(160, 0x7f).toString('base64') },
    });
  });

  it('parses dtmf, mark and stop', () => {
    expect(
      expectOk(parseInboundMessage(`{"event":"dtmf","sequenceNumber":"9","streamSid":"${STREAM_SID}","dtmf":{"track":"inbound_track","digit":"5"}}`)),
    ).toEqual({ event: 'dtmf', sequenceNumber: 9, streamSid: STREAM_SID, dtmf: { track: 'inbound_track', digit: '5' } });
    expect(expectOk(parseInboundMessage(`{"event":"mark","sequenceNumber":"10","streamSid":"${STREAM_SID}","mark":{"name":"r7:1840"}}`))).toEqual({
      event: 'mark',
      sequenceNumber: 10,
      streamSid: STREAM_SID,
      mark: { name: 'r7:1840' },
    });
    expect(
      expectOk(
        parseInboundMessage(
          `{"event":"stop","sequenceNumber":"99","streamSid":"${STREAM_SID}","stop":{"accountSid":"${ACCOUNT_SID}","callSid":"${CALL_SID}"}}`,
        ),
      ),
    ).toEqual({ event: 'stop', sequenceNumber: 99, streamSid: STREAM_SID, stop: { accountSid: ACCOUNT_SID, callSid: CALL_SID } });
  });

  it('accepts a stop without a body rather than losing the end of the call', () => {
    const message = expectOk(parseInboundMessage(`{"event":"stop","sequenceNumber":"5","streamSid":"${STREAM_SID}"}`));
    expect(message).toEqual({ event: 'stop', sequenceNumber: 5, streamSid: STREAM_SID, stop: {} });
  });

  it('reports invalid JSON without quoting the frame (it may carry the stream token)', () => {
    expect(expectError(parseInboundMessage('{"event":"media",')).code).toBe('invalid_json');
    expect(expectError(parseInboundMessage('')).code).toBe('invalid_json');
    const leaky = expectError(parseInboundMessage('{"customParameters":{"streamToken":"s3cr3t"},oops}'));
    expect(leaky.code).toBe('invalid_json');
    expect(leaky.message).not.toContain('s3cr3t');
  });

  it('reports JSON that is not an object', () => {
    for (const text of ['null', '1', '"media"', '[{"event":"media"}]']) {
      expect(expectError(parseInboundMessage(text)).code).toBe('not_an_object');
    }
  });

  it('reports a missing or non-string event', () => {
    for (const text of ['{}', '{"event":null}', '{"event":3}']) {
      const error = expectError(parseInboundMessage(text));
      expect(error).toMatchObject({ code: 'missing_event', field: 'event' });
    }
  });

  it('reports unknown events, including names that exist on Object.prototype', () => {
    for (const event of ['transcript', 'toString', '__proto__', 'constructor']) {
      const error = expectError(parseInboundMessage(JSON.stringify({ event, streamSid: STREAM_SID })));
      expect(error.code).toBe('unknown_event');
      expect(error.message).toContain(event);
    }
  });

  it('names the offending field on a schema violation', () => {
    const missingPayload = expectError(
      parseInboundMessage(`{"event":"media","sequenceNumber":"2","streamSid":"${STREAM_SID}","media":{"track":"inbound","chunk":"1","timestamp":"20"}}`),
    );
    expect(missingPayload).toMatchObject({ code: 'schema_violation', event: 'media', field: 'media.payload' });
    expect(missingPayload.message).toContain('media.payload');

    const badSequence = expectError(
      parseInboundMessage(`{"event":"mark","sequenceNumber":"ten","streamSid":"${STREAM_SID}","mark":{"name":"a"}}`),
    );
    expect(badSequence).toMatchObject({ code: 'schema_violation', field: 'sequenceNumber' });

    const badDigit = expectError(
      parseInboundMessage(`{"event":"dtmf","sequenceNumber":"3","streamSid":"${STREAM_SID}","dtmf":{"digit":"55"}}`),
    );
    expect(badDigit).toMatchObject({ code: 'schema_violation', field: 'dtmf.digit' });

    const noFormat = expectError(
      parseInboundMessage(`{"event":"start","sequenceNumber":"1","streamSid":"${STREAM_SID}","start":{"accountSid":"AC1","callSid":"CA1"}}`),
    );
    expect(noFormat).toMatchObject({ code: 'schema_violation', field: 'start.mediaFormat' });

    const emptySid = expectError(parseInboundMessage('{"event":"mark","sequenceNumber":"4","streamSid":"","mark":{"name":"a"}}'));
    expect(emptySid).toMatchObject({ code: 'schema_violation', field: 'streamSid' });
  });

  it('refuses frames over the size limit without parsing them', () => {
    const huge = `{"event":"media","pad":"${'x'.repeat(MAX_INBOUND_MESSAGE_CHARS)}"}`;
    const error = expectError(parseInboundMessage(huge));
    expect(error.code).toBe('message_too_large');
    expect(error.message).toContain(String(MAX_INBOUND_MESSAGE_CHARS));
    // Exactly at the limit is still parsed (and here fails only for being an unknown event).
    const atLimit = `{"event":"x","pad":"${'y'.repeat(MAX_INBOUND_MESSAGE_CHARS - 22)}"}`;
    expect(atLimit.length).toBe(MAX_INBOUND_MESSAGE_CHARS);
    expect(expectError(parseInboundMessage(atLimit)).code).toBe('unknown_event');
  });

  it('never throws, whatever it is given', () => {
    const nasty: unknown[] = [
      undefined,
      null,
      42,
      Buffer.from('{"event":"connected"}'),
      '{"event":"start","start":null}',
      '{"event":"media","media":[]}',
      `{"event":"media","sequenceNumber":"1e400","streamSid":"MZ","media":{"chunk":"1","timestamp":"1","payload":""}}`,
      '['.repeat(5000),
      '{"__proto__":{"event":"media"}}',
    ];
    for (const input of nasty) {
      const result = parseInboundMessage(input as string);
      expect(result.ok).toBe(false);
    }
  });

  it('takes the zod-free media fast path only for what the schema accepts, with the same output', () => {
    const base = { event: 'media', sequenceNumber: '2', streamSid: STREAM_SID };
    const media = { track: 'inbound', chunk: '1', timestamp: '20', payload: 'AAAA' };
    const variants: Record<string, unknown>[] = [
      { ...base, media },
      { ...base, sequenceNumber: 2, media: { ...media, chunk: 1, timestamp: 0 } },
      { ...base, media: { chunk: '1', timestamp: '20', payload: '' } },
      { ...base, media: { ...media, extra: 'ignored' }, extra: true },
      { ...base, sequenceNumber: '999999999999999', media },
      { ...base, sequenceNumber: '1000000000000000', media },
      { ...base, sequenceNumber: '-1', media },
      { ...base, sequenceNumber: '1.5', media },
      { ...base, sequenceNumber: ' 1', media },
      { ...base, sequenceNumber: '', media },
      { ...base, sequenceNumber: 1.5, media },
      { ...base, sequenceNumber: -1, media },
      { ...base, sequenceNumber: Number.MAX_SAFE_INTEGER + 1, media },
      { ...base, sequenceNumber: null, media },
      { ...base, sequenceNumber: '١', media }, // Arabic-Indic digit: not an ASCII counter
      { ...base, streamSid: '', media },
      { ...base, streamSid: 5, media },
      { ...base, media: { ...media, payload: 5 } },
      { ...base, media: { ...media, track: 3 } },
      { ...base, media: { ...media, timestamp: 'soon' } },
      { ...base, media: [] },
      { ...base, media: null },
      { ...base },
    ];
    for (const value of variants) {
      const fast = fastMediaMessage(value);
      const schema = inboundMessageSchemas.media.safeParse(value);
      expect({ value, accepted: fast !== null }).toEqual({ value, accepted: schema.success });
      if (fast !== null) expect(fast).toEqual(schema.data);
    }
  });
});
