import { twiml } from 'twilio';
import { parseTwiml } from './twiml-parser';
import { TwilioCallerError } from './twilio-caller.error';
import { decodeXmlEntities, parseXml } from './xml-reader';

describe('parseTwiml', () => {
  it('reads <Connect><Stream> and its Parameters from twilio VoiceResponse output, entities decoded', () => {
    const response = new twiml.VoiceResponse();
    const stream = response.connect().stream({ url: 'wss://example.ngrok.app/twilio/media' });
    stream.parameter({ name: 'token', value: 'a&b<c>"d\'e' });
    stream.parameter({ name: 'agentId', value: 'agent 42' });
    const xml = response.toString();
    expect(xml).toContain('&amp;');

    const parsed = parseTwiml(xml);
    expect(parsed.rejected).toBe(false);
    expect(parsed.stream).toEqual({
      url: 'wss://example.ngrok.app/twilio/media',
      parameters: { token: 'a&b<c>"d\'e', agentId: 'agent 42' },
    });
    expect(parsed.verbs.map((verb) => verb.name)).toEqual(['Connect']);
  });

  it('decodes entities in the Stream url (the signed string is the decoded one)', () => {
    const parsed = parseTwiml(
      `<?xml version="1.0" encoding="UTF-8"?>\n<Response>\n  <Connect>\n    <Stream url='wss://h.example/a&amp;b/media' statusCallback="https://h.example/s">` +
        `<Parameter name="x" value="&#65;&#x42;&quot;"/></Stream>\n  </Connect>\n</Response>\n`,
    );
    expect(parsed.stream).toEqual({
      url: 'wss://h.example/a&b/media',
      parameters: { x: 'AB"' },
      statusCallback: 'https://h.example/s',
    });
  });

  it('reports <Say>…</Say><Hangup/> as a rejected call with the spoken text', () => {
    const response = new twiml.VoiceResponse();
    response.say('Sorry, this number is not in service & cannot take calls.');
    response.hangup();
    const parsed = parseTwiml(response.toString());
    expect(parsed).toMatchObject({
      rejected: true,
      hangup: true,
      stream: null,
      sayText: 'Sorry, this number is not in service & cannot take calls.',
    });
  });

  it('treats a Hangup before Connect as rejected (Twilio runs verbs in order)', () => {
    const parsed = parseTwiml('<Response><Hangup/><Connect><Stream url="wss://h/m"/></Connect></Response>');
    expect(parsed.rejected).toBe(true);
    expect(parsed.stream).toBeNull();
  });

  it('keeps comments and CDATA from confusing the reader', () => {
    const parsed = parseTwiml('<Response><!-- <Hangup/> --><Say><![CDATA[1 < 2 & 3]]></Say><Reject/></Response>');
    expect(parsed).toMatchObject({ rejected: true, sayText: '1 < 2 & 3', hangup: true });
    expect(parsed.verbs.map((verb) => verb.name)).toEqual(['Say', 'Reject']);
  });

  it.each([
    ['not XML', 'Internal Server Error'],
    ['an unclosed element', '<Response><Connect></Response>'],
    ['a mismatched closing tag', '<Response><Say>hi</Sey></Response>'],
    ['an unknown entity', '<Response><Say>&nbsp;</Say></Response>'],
    ['a root other than Response', '<Reply><Hangup/></Reply>'],
    ['a Stream without url', '<Response><Connect><Stream/></Connect></Response>'],
    ['a non-loopback ws:// Stream url (Twilio only dials wss)', '<Response><Connect><Stream url="ws://h/m"/></Connect></Response>'],
    ['a query string in the Stream url', '<Response><Connect><Stream url="wss://h/m?token=1"/></Connect></Response>'],
  ])('rejects %s with TWIML_INVALID', (_label, xml) => {
    expect(() => parseTwiml(xml)).toThrow(TwilioCallerError);
    expect(() => parseTwiml(xml)).toThrow(expect.objectContaining({ code: 'TWIML_INVALID', retryable: false }));
  });

  it("accepts ws:// on loopback (the server's local-development mode)", () => {
    const twiml = parseTwiml('<Response><Connect><Stream url="ws://127.0.0.1:3000/twilio/media"/></Connect></Response>');
    expect(twiml.stream?.url).toBe('ws://127.0.0.1:3000/twilio/media');
  });
});

describe('xml-reader', () => {
  it('builds a tree with attributes, nested elements and text', () => {
    expect(parseXml('<a x="1" y=\'2\'><b/>t<c>u</c></a>')).toEqual({
      name: 'a',
      attributes: { x: '1', y: '2' },
      children: [{ name: 'b', attributes: {}, children: [] }, 't', { name: 'c', attributes: {}, children: ['u'] }],
    });
  });

  it('decodes named and numeric entities, including astral code points', () => {
    expect(decodeXmlEntities('&lt;&gt;&amp;&quot;&apos;&#128512;&#x1F600;')).toBe('<>&"\'😀😀');
  });

  it('rejects a second root element and duplicate attributes', () => {
    expect(() => parseXml('<a/><b/>')).toThrow(/More than one root/);
    expect(() => parseXml('<a x="1" x="2"/>')).toThrow(/Duplicate attribute/);
  });
});
