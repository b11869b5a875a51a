import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import {
  computeWebhookSignature,
  generateSigningSecret,
  isStandardWebhooksSecret,
  parseSigningSecret,
  signWebhook,
  verifyWebhookSignature,
} from './webhook-signature';

// Expected values are computed here with node:crypto directly (or with the official
// `standardwebhooks` package), independently of the module under test.
function referenceSignature(secret: string, signedText: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return createHmac('sha256', key).update(signedText, 'utf8').digest('base64');
}

const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const otherSecret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const body = '{"tool":"book_table","arguments":{"partySize":4,"name":"Zoë"}}';
const timestampS = 1_700_000_000;

describe('signWebhook', () => {
  it('produces the Standard Webhooks headers with a v1 HMAC-SHA256 over "id.timestamp.body", keyed by the decoded secret', () => {
    const headers = signWebhook({ secret, id: 'msg_1', timestampS, body });

    expect(headers).toEqual({
      'webhook-id': 'msg_1',
      'webhook-timestamp': '1700000000',
      'webhook-signature': `v1,${referenceSignature(secret, `msg_1.1700000000.${body}`)}`,
    });
    // Not the old scheme (timestamp.body keyed by the secret string's UTF-8 bytes).
    expect(headers['webhook-signature']).not.toBe(`v1,${createHmac('sha256', secret).update(`1700000000.${body}`).digest('base64')}`);
  });

  it("matches the Standard Webhooks spec's published test vector", () => {
    const headers = signWebhook({
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      timestampS: 1614265330,
      body: '{"test": 2432232314}',
    });
    expect(headers['webhook-signature']).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs bytes exactly as given (a Buffer body gives the same signature as its UTF-8 text)', () => {
    const fromText = signWebhook({ secret, id: 'msg_1', timestampS, body });
    const fromBytes = signWebhook({ secret, id: 'msg_1', timestampS, body: Buffer.from(body, 'utf8') });
    expect(fromBytes['webhook-signature']).toBe(fromText['webhook-signature']);
    expect(computeWebhookSignature(secret, 'msg_1', timestampS, body)).toBe(fromText['webhook-signature'].slice(3));
  });

  it('refuses an empty secret, fractional timestamps and ids that would break the header', () => {
    expect(() => signWebhook({ secret: '', id: 'a', timestampS, body })).toThrow(/empty secret/);
    expect(() => signWebhook({ secret, id: 'a', timestampS: 1.5, body })).toThrow(/whole unix seconds/);
    expect(() => signWebhook({ secret, id: 'a b', timestampS, body })).toThrow(/webhook id/);
  });

  it('refuses secrets not in whsec_ format, with a clear message that never contains the secret', () => {
    const notStandard = [
      'booking-signing-secret-value-0123456789',
      Buffer.alloc(32, 7).toString('base64'), // right key, no prefix
      'whsec_not*base64!at-all-0123456789abcdef',
      `whsec_${Buffer.alloc(32, 7).toString('base64url')}`, // URL-safe alphabet, no padding
      `whsec_${Buffer.alloc(16, 7).toString('base64')}`, // too short a key
      `whsec_${Buffer.alloc(65, 7).toString('base64')}`, // too long a key
    ];
    for (const bad of notStandard) {
      let message = '';
      try {
        signWebhook({ secret: bad, id: 'msg_1', timestampS, body });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/^webhook signing secret must be "whsec_" followed by base64 of 24 to 64 random bytes, but /);
      expect(message).not.toContain(bad);
      expect(message).not.toContain(bad.slice(6, 16));
    }
  });
});

describe('signing secrets', () => {
  it('parseSigningSecret returns the base64-decoded key after whsec_', () => {
    expect(parseSigningSecret(secret)).toEqual(Buffer.alloc(32, 7));
    expect(parseSigningSecret(`whsec_${Buffer.alloc(24, 1).toString('base64')}`)).toHaveLength(24);
    expect(parseSigningSecret(`whsec_${Buffer.alloc(64, 1).toString('base64')}`)).toHaveLength(64);
  });

  it('parseSigningSecret says what is wrong', () => {
    expect(() => parseSigningSecret('plain-secret-value-0123456789')).toThrow(/does not start with "whsec_"/);
    expect(() => parseSigningSecret('whsec_')).toThrow(/not valid \(padded, standard\) base64/);
    expect(() => parseSigningSecret('whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).toThrow(/not valid \(padded, standard\) base64/); // padding missing
    expect(() => parseSigningSecret(`whsec_ ${Buffer.alloc(32, 7).toString('base64')}`)).toThrow(/not valid/);
    expect(() => parseSigningSecret(`whsec_${Buffer.alloc(23, 7).toString('base64')}`)).toThrow(/its key is 23 bytes, not 24 to 64/);
    expect(() => parseSigningSecret(`whsec_${Buffer.alloc(65, 7).toString('base64')}`)).toThrow(/its key is 65 bytes, not 24 to 64/);
  });

  it('isStandardWebhooksSecret accepts only whsec_ + base64 of 24..64 bytes', () => {
    expect(isStandardWebhooksSecret(secret)).toBe(true);
    expect(isStandardWebhooksSecret('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).toBe(true);
    expect(isStandardWebhooksSecret('whsec-test-secret-0123456789')).toBe(false);
    expect(isStandardWebhooksSecret(`whsec_${Buffer.alloc(8).toString('base64')}`)).toBe(false);
    expect(isStandardWebhooksSecret('')).toBe(false);
    expect(isStandardWebhooksSecret(undefined)).toBe(false);
  });

  it('generateSigningSecret gives whsec_ + base64 of 32 fresh random bytes, usable by the official package', () => {
    const generated = generateSigningSecret();
    expect(generated).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(parseSigningSecret(generated)).toHaveLength(32);
    expect(generateSigningSecret()).not.toBe(generated);
    const nowS = Math.floor(Date.now() / 1000);
    expect(() => new Webhook(generated).verify(body, { ...signWebhook({ secret: generated, id: 'msg_g', timestampS: nowS, body }) })).not.toThrow();
  });
});

describe('verifyWebhookSignature', () => {
  const headers = {
    'webhook-id': 'msg_1',
    'webhook-timestamp': String(timestampS),
    'webhook-signature': `v1,${referenceSignature(secret, `msg_1.${timestampS}.${body}`)}`,
  };

  it('accepts a signature made independently with the same secret', () => {
    expect(verifyWebhookSignature({ secret, headers, body, nowS: timestampS + 10 })).toEqual({ valid: true, id: 'msg_1', timestampS });
  });

  it('accepts when any of several space-separated signatures matches (secret rotation)', () => {
    const rotated = {
      ...headers,
      'webhook-signature': `v1,${referenceSignature(otherSecret, `msg_1.${timestampS}.${body}`)} v2,ignored ${headers['webhook-signature']}`,
    };
    expect(verifyWebhookSignature({ secret, headers: rotated, body, nowS: timestampS }).valid).toBe(true);
  });

  it('rejects a tampered body, id or timestamp, a wrong secret and a truncated signature', () => {
    expect(verifyWebhookSignature({ secret, headers, body: body.replace('4', '5'), nowS: timestampS })).toEqual({
      valid: false,
      reason: 'no matching v1 signature',
    });
    expect(verifyWebhookSignature({ secret, headers: { ...headers, 'webhook-id': 'msg_2' }, body, nowS: timestampS }).valid).toBe(false);
    const shifted = { ...headers, 'webhook-timestamp': String(timestampS + 1) };
    expect(verifyWebhookSignature({ secret, headers: shifted, body, nowS: timestampS }).valid).toBe(false);
    expect(verifyWebhookSignature({ secret: otherSecret, headers, body, nowS: timestampS }).valid).toBe(false);
    const truncated = { ...headers, 'webhook-signature': headers['webhook-signature'].slice(0, 20) };
    expect(verifyWebhookSignature({ secret, headers: truncated, body, nowS: timestampS }).valid).toBe(false);
  });

  it('rejects (without throwing or echoing it) a secret not in whsec_ format', () => {
    const result = verifyWebhookSignature({ secret: 'not-a-standard-secret-0123456789', headers, body, nowS: timestampS });
    expect(result).toEqual({ valid: false, reason: expect.stringMatching(/^webhook signing secret must be "whsec_"/) });
    expect(JSON.stringify(result)).not.toContain('not-a-standard-secret');
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

describe('interoperability with the official standardwebhooks package', () => {
  // The package checks the timestamp against the real clock, so these use the current time.
  const nowS = (): number => Math.floor(Date.now() / 1000);

  it('our signature verifies with Webhook.verify', () => {
    const headers = signWebhook({ secret, id: 'msg_interop_1', timestampS: nowS(), body });
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    const bytes = Buffer.from(body, 'utf8');
    const fromBytes = signWebhook({ secret, id: 'msg_interop_1', timestampS: nowS(), body: bytes });
    expect(() => new Webhook(secret).verify(bytes, { ...fromBytes })).not.toThrow();
  });

  it('a signature made by Webhook.sign verifies with verifyWebhookSignature', () => {
    const timestamp = nowS();
    const signature = new Webhook(secret).sign('msg_interop_2', new Date(timestamp * 1000), body);
    const headers = { 'webhook-id': 'msg_interop_2', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
    expect(verifyWebhookSignature({ secret, headers, body })).toEqual({ valid: true, id: 'msg_interop_2', timestampS: timestamp });
    expect(signature).toBe(signWebhook({ secret, id: 'msg_interop_2', timestampS: timestamp, body })['webhook-signature']);
  });

  it('a tampered body, id or timestamp fails with Webhook.verify', () => {
    const timestamp = nowS();
    const headers = { ...signWebhook({ secret, id: 'msg_interop_3', timestampS: timestamp, body }) };
    const webhook = new Webhook(secret);
    expect(() => webhook.verify(body.replace('4', '5'), headers)).toThrow('No matching signature found');
    expect(() => webhook.verify(body, { ...headers, 'webhook-id': 'msg_interop_4' })).toThrow('No matching signature found');
    expect(() => webhook.verify(body, { ...headers, 'webhook-timestamp': String(timestamp - 1) })).toThrow('No matching signature found');
    expect(() => new Webhook(otherSecret).verify(body, headers)).toThrow('No matching signature found');
  });

  it('a tampered body, id or timestamp fails with verifyWebhookSignature for a Webhook.sign signature', () => {
    const timestamp = nowS();
    const signature = new Webhook(secret).sign('msg_interop_5', new Date(timestamp * 1000), body);
    const headers = { 'webhook-id': 'msg_interop_5', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
    expect(verifyWebhookSignature({ secret, headers, body: body.replace('4', '5') }).valid).toBe(false);
    expect(verifyWebhookSignature({ secret, headers: { ...headers, 'webhook-id': 'msg_interop_6' }, body }).valid).toBe(false);
    expect(verifyWebhookSignature({ secret, headers: { ...headers, 'webhook-timestamp': String(timestamp - 1) }, body }).valid).toBe(false);
    expect(verifyWebhookSignature({ secret: otherSecret, headers, body }).valid).toBe(false);
  });
});
