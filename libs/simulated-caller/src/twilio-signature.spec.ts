import { getExpectedTwilioSignature, validateRequest } from 'twilio';
import { computeTwilioSignature, signatureHeaderFor } from './twilio-signature';
import { newSid } from './twilio-sid';
import { CallParties, statusCallbackParams, voiceWebhookParams } from './twilio-webhook-params';

const AUTH_TOKEN = '0123456789abcdef0123456789abcdef';
const parties: CallParties = { accountSid: newSid('AC'), callSid: newSid('CA'), from: '+15550001111', to: '+15550002222' };

describe('computeTwilioSignature', () => {
  it.each([
    ['voice webhook params', 'https://example.ngrok.app/twilio/voice', voiceWebhookParams(parties)],
    ['status callback params', 'https://example.ngrok.app/twilio/status', statusCallbackParams(parties, {
      callStatus: 'completed', sequenceNumber: 3, callDurationSec: 61.4, at: new Date(Date.UTC(2026, 10, 22, 17, 51)),
    })],
    ['no params (media socket upgrade)', 'wss://example.ngrok.app/twilio/media', {}],
    ['unicode, spaces, symbols and empty values', 'https://h.example/twilio/voice', {
      Body: 'héllo wörld ✓ & <tag> "quoted" +plus',
      Empty: '',
      'a-lower': '1',
      Zeta: '=%20?',
      B: '😀',
    }],
    ['names differing only by case (sorted by code unit)', 'https://h.example/x', { b: '1', B: '2', a: '3', A: '4' }],
  ])('matches twilio.getExpectedTwilioSignature and validateRequest for %s', (_label, url, params) => {
    const signature = computeTwilioSignature(AUTH_TOKEN, url, params);
    expect(signature).toBe(getExpectedTwilioSignature(AUTH_TOKEN, url, params));
    expect(validateRequest(AUTH_TOKEN, signature, url, params)).toBe(true);
  });

  it('changes with the token, the URL and every parameter value', () => {
    const url = 'https://example.ngrok.app/twilio/voice';
    const params = voiceWebhookParams(parties);
    const signature = computeTwilioSignature(AUTH_TOKEN, url, params);
    expect(computeTwilioSignature(`${AUTH_TOKEN}x`, url, params)).not.toBe(signature);
    expect(computeTwilioSignature(AUTH_TOKEN, 'http://127.0.0.1:3000/twilio/voice', params)).not.toBe(signature);
    expect(computeTwilioSignature(AUTH_TOKEN, url, { ...params, To: '+15550009999' })).not.toBe(signature);
  });
});

describe('signatureHeaderFor', () => {
  const url = 'wss://example.ngrok.app/twilio/media';

  it('signs validly, omits, tampers or passes an explicit value', () => {
    expect(validateRequest(AUTH_TOKEN, signatureHeaderFor('valid', AUTH_TOKEN, url) ?? '', url, {})).toBe(true);
    expect(signatureHeaderFor('omit', AUTH_TOKEN, url)).toBeUndefined();
    const tampered = signatureHeaderFor('tampered', AUTH_TOKEN, url);
    expect(tampered).toMatch(/^[A-Za-z0-9+/]{27}=$/);
    expect(validateRequest(AUTH_TOKEN, tampered ?? '', url, {})).toBe(false);
    expect(signatureHeaderFor({ header: 'abc' }, AUTH_TOKEN, url)).toBe('abc');
  });
});

describe('webhook params', () => {
  it('carries the call identities and a realistic inbound set', () => {
    const params = voiceWebhookParams(parties, { CallerName: 'Ada' });
    expect(params).toMatchObject({
      AccountSid: parties.accountSid,
      CallSid: parties.callSid,
      ApiVersion: '2010-04-01',
      CallStatus: 'ringing',
      Direction: 'inbound',
      From: '+15550001111',
      Caller: '+15550001111',
      To: '+15550002222',
      Called: '+15550002222',
      CallerName: 'Ada',
    });
    expect(params['FromCity']).toEqual(expect.any(String));
    expect(parties.callSid).toMatch(/^CA[0-9a-f]{32}$/);
  });

  it('adds CallDuration (seconds) and Duration (billed minutes, rounded up) only on terminal statuses', () => {
    const at = new Date(Date.UTC(2026, 10, 22, 17, 51, 7));
    const completed = statusCallbackParams(parties, { callStatus: 'completed', sequenceNumber: 2, callDurationSec: 61.4, at });
    expect(completed).toMatchObject({ CallStatus: 'completed', SequenceNumber: '2', CallDuration: '62', Duration: '2' });
    expect(completed['Timestamp']).toBe('Sun, 22 Nov 2026 17:51:07 +0000');
    const inProgress = statusCallbackParams(parties, { callStatus: 'in-progress', sequenceNumber: 0, at });
    expect(inProgress['CallDuration']).toBeUndefined();
    expect(inProgress['Duration']).toBeUndefined();
  });
});
