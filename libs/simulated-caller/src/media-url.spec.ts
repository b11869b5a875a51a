import { joinUrl, localMediaUrl } from './media-url';

describe('localMediaUrl', () => {
  it('maps the public wss URL onto the local server address', () => {
    expect(localMediaUrl('wss://example.ngrok.app/twilio/media', 'http://127.0.0.1:3000', 'https://example.ngrok.app')).toBe(
      'ws://127.0.0.1:3000/twilio/media',
    );
  });

  it('keeps wss for an https server and swaps a public path prefix for the local one', () => {
    expect(
      localMediaUrl('wss://voice.example.com/sb/twilio/media', 'https://10.0.0.5:8443/', 'https://voice.example.com/sb/'),
    ).toBe('wss://10.0.0.5:8443/twilio/media');
    expect(localMediaUrl('wss://voice.example.com/twilio/media', 'http://127.0.0.1:3000/app', 'https://voice.example.com')).toBe(
      'ws://127.0.0.1:3000/app/twilio/media',
    );
  });
});

describe('joinUrl', () => {
  it('puts exactly one slash between base and path', () => {
    expect(joinUrl('https://h.example/', '/twilio/voice')).toBe('https://h.example/twilio/voice');
    expect(joinUrl('https://h.example', 'twilio/voice')).toBe('https://h.example/twilio/voice');
  });
});
