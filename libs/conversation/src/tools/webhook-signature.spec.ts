import { createHmac } from 'node:crypto';
import { signWebhook, verifyWebhookSignature } from './webhook-signature';

// Expected values are computed here with node:crypto directly, independently of the module.
function referenceSignature(secret: string, signedText: string): string {
  return createHmac('sha256', secret).update(signedText, 'utf8').digest('base64');
}

const secret = 'whsec-test-secret-0123456789';
const body = '{"tool":"book_table","arguments":{"partySize":4,"name":"Zoë"}}';
const timestampS = 1_700_000_000;

describe('signWebhook', () => {
  it('produces the Standard Webhooks header names with a v1 HMAC-SHA256 over "timestamp.body"', () => {
    const headers = signWebhook({ secret, id: 'msg_1', timestampS, body });

    expect(headers).toEqual({
      'webhook-id': 'msg_1',
      'webhook-timestamp': '1700000000',
      'webhook-signature': `v1,${referenceSignature(secret, `1700000000.${body}`)}`,
    });
  });

  it('signs bytes exactly as given (a Buffer body gives the same signature as its UTF-8 text)', () => {
    const fromText = signWebhook({ secret, id: 'msg_1', timestampS, body });
    const fromBytes = signWebhook({ secret, id: 'msg_1', timestampS, body: Buffer.from(body, 'utf8') });
    expect(fromBytes['webhook-signature']).toBe(fromText['webhook-signature']);
  });

  it('matches a fixed vector (guards against the signed text format changing silently)', () => {
    const fixed = signWebhook({ secret: 'k', id: 'msg_x', timestampS: 1, body: '{}' });
    expect(fixed['webhook-signature']).toBe(`v1,${referenceSignature('k', '1.{}')}`);
    expect(fixed['webhook-signature']).not.toBe(`v1,${referenceSignature('k', 'msg_x.1.{}')}`);
  });

  it('refuses an empty secret, fractional timestamps and ids that would break the header', () => {
    expect(() => signWebhook({ secret: '', id: 'a', timestampS, body })).toThrow(/empty secret/);
    expect(() => signWebhook({ secret, id: 'a', timestampS: 1.5, body })).toThrow(/whole unix seconds/);
    expect(() => signWebhook({ secret, id: 'a b', timestampS, body })).toThrow(/webhook id/);
  });
});

describe('verifyWebhookSignature', () => {
  const headers = {
    'webhook-id': 'msg_1',
    'webhook-timestamp': String(timestampS),
    'webhook-signature': `v1,${referenceSignature(secret, `${timestampS}.${body}`)}`,
  };

  it('accepts a signature made independently with the same secret', () => {
    expect(verifyWebhookSignature({ secret, headers, body, nowS: timestampS + 10 })).toEqual({ valid: true, id: 'msg_1', timestampS });
  });

  it('accepts when any of several space-separated signatures matches (secret rotation)', () => {
    const rotated = {
      ...headers,
      'webhook-signature': `v1,${referenceSignature('old-secret', `${timestampS}.${body}`)} v2,ignored ${headers['webhook-signature']}`,
    };
    expect(verifyWebhookSignature({ secret, headers: rotated, body, nowS: timestampS }).valid).toBe(true);
  });

  it('rejects a tampered body, a wrong secret and a truncated signature', () => {
    expect(verifyWebhookSignature({ secret, headers, body: body.replace('4', '5'), nowS: timestampS })).toEqual({
      valid: false,
      reason: 'no matching v1 signature',
    });
    expect(verifyWebhookSignature({ secret: 'other', headers, body, nowS: timestampS }).valid).toBe(false);
    const truncated = { ...headers, 'webhook-signature': headers['webhook-signature'].slice(0, 20) };
    expect(verifyWebhookSignature({ secret, headers: truncated, body, nowS: timestampS }).valid).toBe(false);
  });

  it('rejects a timestamp outside the tolerance window, in either direction', () => {
    const tooOld = verifyWebhookSignature({ secret, headers, body, nowS: timestampS + 301 });
    expect(tooOld).toEqual({ valid: false, reason: 'timestamp is 301 s from now (tolerance 300 s)' });
    expect(verifyWebhookSignature({ secret, headers, body, nowS: timestampS - 301 }).valid).toBe(false);
    expect(verifyWebhookSignature({ secret, headers, body, nowS: timestampS + 300 }).valid).toBe(true);
    expect(verifyWebhookSignature({ secret, headers, body, nowS: timestampS + 30, toleranceS: 10 }).valid).toBe(false);
  });

  it('rejects missing headers and a timestamp that is not unix seconds', () => {
    const { 'webhook-id': _omitted, ...withoutId } = headers;
    expect(verifyWebhookSignature({ secret, headers: withoutId, body, nowS: timestampS })).toMatchObject({
      valid: false,
      reason: expect.stringContaining('missing'),
    });
    const isoTimestamp = { ...headers, 'webhook-timestamp': '2023-11-14T22:13:20Z' };
    expect(verifyWebhookSignature({ secret, headers: isoTimestamp, body, nowS: timestampS })).toMatchObject({ valid: false });
  });

  it('round-trips with signWebhook', () => {
    const signed = signWebhook({ secret, id: 'msg_2', timestampS, body });
    expect(verifyWebhookSignature({ secret, headers: { ...signed }, body, nowS: timestampS }).valid).toBe(true);
  });
});
