import { TelephonyError } from './telephony-error';
import { connectStreamTwiml, MAX_STREAM_PARAMETER_CHARS, rejectCallTwiml } from './twiml';

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

function thrownBy(action: () => unknown): TelephonyError {
  try {
    action();
  } catch (error) {
    if (error instanceof TelephonyError) return error;
    throw error;
  }
  throw new Error('expected a TelephonyError');
}

describe('connectStreamTwiml', () => {
  it('connects the call to the stream with its parameters, XML-escaped', () => {
    const twiml = connectStreamTwiml({
      streamUrl: 'wss://voice.example.com/twilio/media',
      parameters: { callId: 'c-1', streamToken: 'a&b<c>"d"' },
    });
    expect(twiml).toBe(
      `${XML_DECLARATION}<Response><Connect><Stream url="wss://voice.example.com/twilio/media">` +
        '<Parameter name="callId" value="c-1"/>' +
        // twilio's XML writer leaves '>' bare in attributes, which XML allows.
        '<Parameter name="streamToken" value="a&amp;b&lt;c>&quot;d&quot;"/>' +
        '</Stream></Connect></Response>',
    );
  });

  it('adds a POST status callback when asked', () => {
    const twiml = connectStreamTwiml({
      streamUrl: 'wss://voice.example.com/twilio/media',
      parameters: {},
      statusCallbackUrl: 'https://voice.example.com/twilio/stream-status',
    });
    expect(twiml).toBe(
      `${XML_DECLARATION}<Response><Connect><Stream url="wss://voice.example.com/twilio/media" ` +
        'statusCallback="https://voice.example.com/twilio/stream-status" statusCallbackMethod="POST"/></Connect></Response>',
    );
  });

  it('accepts ws:// only on loopback hosts (local development)', () => {
    for (const host of ['localhost:3000', '127.0.0.1:3000', '[::1]:3000']) {
      expect(connectStreamTwiml({ streamUrl: `ws://${host}/twilio/media`, parameters: {} })).toContain(`ws://${host}/twilio/media`);
    }
    expect(thrownBy(() => connectStreamTwiml({ streamUrl: 'ws://10.0.0.5/twilio/media', parameters: {} })).code).toBe('stream_url_not_wss');
  });

  it('accepts only wss URLs without a query string', () => {
    expect(thrownBy(() => connectStreamTwiml({ streamUrl: 'ws://voice.example.com/twilio/media', parameters: {} })).code).toBe(
      'stream_url_not_wss',
    );
    expect(thrownBy(() => connectStreamTwiml({ streamUrl: 'https://voice.example.com/twilio/media', parameters: {} })).code).toBe(
      'stream_url_not_wss',
    );
    expect(thrownBy(() => connectStreamTwiml({ streamUrl: 'wss://voice.example.com/twilio/media?callId=1', parameters: {} })).code).toBe(
      'stream_url_has_query',
    );
    expect(thrownBy(() => connectStreamTwiml({ streamUrl: '/twilio/media', parameters: {} })).code).toBe('invalid_stream_url');
  });

  it(`refuses a parameter whose name + value reach ${MAX_STREAM_PARAMETER_CHARS} chars, without echoing the value`, () => {
    const streamUrl = 'wss://voice.example.com/twilio/media';
    const longest = 'v'.repeat(MAX_STREAM_PARAMETER_CHARS - 1 - 'streamToken'.length);
    expect(() => connectStreamTwiml({ streamUrl, parameters: { streamToken: longest } })).not.toThrow();
    const error = thrownBy(() => connectStreamTwiml({ streamUrl, parameters: { streamToken: `${longest}X` } }));
    expect(error.code).toBe('parameter_too_long');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('streamToken');
    expect(error.message).not.toContain(longest);
  });

  it('refuses empty parameter names and bad status callback URLs', () => {
    const streamUrl = 'wss://voice.example.com/twilio/media';
    expect(thrownBy(() => connectStreamTwiml({ streamUrl, parameters: { ' ': 'x' } })).code).toBe('invalid_parameter_name');
    expect(thrownBy(() => connectStreamTwiml({ streamUrl, parameters: {}, statusCallbackUrl: 'ftp://x/y' })).code).toBe(
      'invalid_status_callback_url',
    );
  });
});

describe('rejectCallTwiml', () => {
  it('says the message, escaped, then hangs up', () => {
    expect(rejectCallTwiml('Sorry, <this> number & that are not in service.')).toBe(
      `${XML_DECLARATION}<Response><Say>Sorry, &lt;this&gt; number &amp; that are not in service.</Say><Hangup/></Response>`,
    );
  });

  it('just hangs up when the message is blank', () => {
    expect(rejectCallTwiml('  ')).toBe(`${XML_DECLARATION}<Response><Hangup/></Response>`);
  });
});
