import { createHmac } from 'node:crypto';
import { inspect } from 'node:util';
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks';
import { mediaStreamUrl, webhookUrl } from './public-urls';
import { TelephonyError } from './telephony-error';
import { TwilioSignatureVerifier } from './twilio-signature';

const AUTH_TOKEN = 'f3b0c44298fc1c149afbf4c8996fb924';

/** The signing rule written out independently of twilio-node: URL + sorted name/value pairs. */
function independentSignature(authToken: string, url: string, params: Record<string, string>): string {
  const data = Object.keys(params)
    .sort()
    .reduce((text, name) => text + name + params[name], url);
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

describe('TwilioSignatureVerifier', () => {
  const url = webhookUrl('https://voice.example.com', '/twilio/voice');
  const params = {
    CallSid: 'CA5b8c5a5f2b6e1f0c2a1b0e9d8c7b6a5f',
    AccountSid: 'AC0123456789abcdef0123456789abcdef',
    From: '+14155550100',
    To: '+14155550199',
    CallStatus: 'ringing',
    Direction: 'inbound',
  };
  const verifier = new TwilioSignatureVerifier(AUTH_TOKEN);

  it("matches Twilio's documented example signature", () => {
    const documentedParams = { CallSid: 'CA1234567890ABCDE', Caller: '+12349013030', Digits: '1234', From: '+12349013030', To: '+18005551212' };
    const documentedUrl = 'https://mycompany.com/myapp.php?foo=1&bar=2';
    expect(independentSignature('12345', documentedUrl, documentedParams)).toBe('0/KCTR6DLpKmkAf8muzZqo1nDgQ=');
    expect(new TwilioSignatureVerifier('12345').verifyHttp(documentedUrl, '0/KCTR6DLpKmkAf8muzZqo1nDgQ=', documentedParams)).toBe(true);
  });

  it('accepts a request signed over the public URL and its form params', () => {
    const signature = independentSignature(AUTH_TOKEN, url, params);
    expect(getExpectedTwilioSignature(AUTH_TOKEN, url, params)).toBe(signature);
    expect(verifier.verifyHttp(url, signature, params)).toBe(true);
  });

  it('refuses a forged request: altered, added or removed params', () => {
    const signature = independentSignature(AUTH_TOKEN, url, params);
    expect(verifier.verifyHttp(url, signature, { ...params, To: '+14155550100' })).toBe(false);
    expect(verifier.verifyHttp(url, signature, { ...params, Extra: '1' })).toBe(false);
    const { From: _from, ...withoutFrom } = params;
    expect(verifier.verifyHttp(url, signature, withoutFrom)).toBe(false);
  });

  it('refuses a signature made for another URL or with another token', () => {
    const otherUrl = independentSignature(AUTH_TOKEN, webhookUrl('https://evil.example.com', '/twilio/voice'), params);
    expect(verifier.verifyHttp(url, otherUrl, params)).toBe(false);
    const otherToken = getExpectedTwilioSignature('another-token', url, params);
    expect(verifier.verifyHttp(url, otherToken, params)).toBe(false);
  });

  it('refuses a missing, empty or truncated signature', () => {
    const signature = independentSignature(AUTH_TOKEN, url, params);
    expect(verifier.verifyHttp(url, undefined, params)).toBe(false);
    expect(verifier.verifyHttp(url, '', params)).toBe(false);
    expect(verifier.verifyHttp(url, signature.slice(0, -1), params)).toBe(false);
  });

  it('returns false rather than throwing on a malformed URL', () => {
    expect(verifier.verifyHttp('not a url', 'c2lnbmF0dXJl', params)).toBe(false);
  });

  it('verifies the media WebSocket upgrade over the stream URL with no params', () => {
    const streamUrl = mediaStreamUrl('https://voice.example.com/');
    expect(streamUrl).toBe('wss://voice.example.com/twilio/media');
    const signature = independentSignature(AUTH_TOKEN, streamUrl, {});
    expect(verifier.verifyWebSocket(streamUrl, signature)).toBe(true);
    expect(verifier.verifyWebSocket(`${streamUrl}?callId=1`, signature)).toBe(false);
    expect(verifier.verifyWebSocket(streamUrl, undefined)).toBe(false);
    expect(verifier.verifyWebSocket(streamUrl, getExpectedTwilioSignature('another-token', streamUrl, {}))).toBe(false);
  });

  it('needs a token, and never shows it', () => {
    expect(() => new TwilioSignatureVerifier('')).toThrow(TelephonyError);
    expect(inspect(verifier)).not.toContain(AUTH_TOKEN);
    expect(JSON.stringify(verifier)).not.toContain(AUTH_TOKEN);
  });
});
