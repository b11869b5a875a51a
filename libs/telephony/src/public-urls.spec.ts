import { mediaStreamUrl, webhookUrl } from './public-urls';
import { TelephonyError } from './telephony-error';

describe('mediaStreamUrl', () => {
  it('maps https to wss and http to ws, appending /twilio/media', () => {
    expect(mediaStreamUrl('https://voice.example.com')).toBe('wss://voice.example.com/twilio/media');
    expect(mediaStreamUrl('http://localhost:3000')).toBe('ws://localhost:3000/twilio/media');
    expect(mediaStreamUrl('HTTPS://voice.example.com')).toBe('wss://voice.example.com/twilio/media');
  });

  it('drops trailing slashes and keeps a base path', () => {
    expect(mediaStreamUrl('https://voice.example.com///')).toBe('wss://voice.example.com/twilio/media');
    expect(mediaStreamUrl('https://example.com/switchboard/')).toBe('wss://example.com/switchboard/twilio/media');
  });

  it('refuses bases that are not absolute http(s) URLs without query or fragment', () => {
    for (const base of ['voice.example.com', 'ftp://voice.example.com', 'https://voice.example.com/?a=1', 'https://x.com/#top', '']) {
      expect(() => mediaStreamUrl(base)).toThrow(TelephonyError);
    }
  });
});

describe('webhookUrl', () => {
  it('joins base and path with exactly one slash, keeping the base as written', () => {
    expect(webhookUrl('https://voice.example.com/', '/twilio/voice')).toBe('https://voice.example.com/twilio/voice');
    expect(webhookUrl('https://voice.example.com', 'twilio/status')).toBe('https://voice.example.com/twilio/status');
    expect(webhookUrl('https://Voice.Example.com:443/base', '/twilio/voice')).toBe('https://Voice.Example.com:443/base/twilio/voice');
  });
});
