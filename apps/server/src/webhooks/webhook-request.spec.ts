import { generateWebhookSecret } from '@switchboard/persistence';
import { isStandardWebhooksSecret, verifyWebhookSignature } from '@switchboard/secrets';
import { Webhook } from 'standardwebhooks';
import { buildWebhookRequest } from './webhook-request';

describe('buildWebhookRequest()', () => {
  const secret = 'whsec_dGVzdC1zZWNyZXQtMDEyMzQ1Njc4OWFiY2RlZg==';
  const otherSecret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
  const eventId = '2f0a4b8e-6a5e-4d8f-9a53-0f8a3c1c2b10';
  const payload = { type: 'call.ended', timestamp: '2030-01-01T00:00:00.000Z', data: { callId: 'c1', durationSeconds: 12 } };
  const now = new Date('2030-01-01T00:00:05.000Z');

  afterEach(() => {
    jest.useRealTimers();
  });

  it('sends the payload as JSON with the Standard Webhooks headers, verifiable with the secret', () => {
    const request = buildWebhookRequest({ eventId, payload, secret, now });
    expect(JSON.parse(request.body)).toEqual(payload);
    expect(request.headers).toMatchObject({
      'content-type': 'application/json',
      'webhook-id': eventId,
      'webhook-timestamp': String(now.getTime() / 1000),
    });
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const verification = verifyWebhookSignature({ secret, headers: request.headers, body: request.body, nowS: now.getTime() / 1000 });
    expect(verification).toEqual({ valid: true, id: eventId, timestampS: now.getTime() / 1000 });
  });

  it('verifies with the official standardwebhooks package (a stock receiver)', () => {
    const request = buildWebhookRequest({ eventId, payload, secret, now });
    // The package checks the timestamp against the real clock: pretend it is a few seconds after `now`.
    jest.useFakeTimers({ now: now.getTime() + 3_000 });
    expect(new Webhook(secret).verify(request.body, request.headers)).toEqual(payload);
    expect(() => new Webhook(otherSecret).verify(request.body, request.headers)).toThrow('No matching signature found');
    expect(() => new Webhook(secret).verify(request.body.replace('12', '13'), request.headers)).toThrow('No matching signature found');
  });

  it('signs with a subscription secret as the repository generates it, verifiable by the official package', () => {
    const generated = generateWebhookSecret();
    expect(isStandardWebhooksSecret(generated)).toBe(true);
    const request = buildWebhookRequest({ eventId, payload, secret: generated });
    expect(() => new Webhook(generated).verify(request.body, request.headers)).not.toThrow();
  });

  it('refuses a secret that is not a Standard Webhooks secret, without echoing it', () => {
    expect(() => buildWebhookRequest({ eventId, payload, secret: 'plain-text-secret-0123456789abcdef', now })).toThrow(
      /^webhook signing secret must be "whsec_"/,
    );
  });

  it('fails verification with another secret or a body changed in transit', () => {
    const request = buildWebhookRequest({ eventId, payload, secret, now });
    const nowS = now.getTime() / 1000;
    expect(verifyWebhookSignature({ secret: otherSecret, headers: request.headers, body: request.body, nowS }).valid).toBe(false);
    const tampered = request.body.replace('12', '13');
    expect(verifyWebhookSignature({ secret, headers: request.headers, body: tampered, nowS }).valid).toBe(false);
  });

  it('keeps the event id on a later attempt but signs the new timestamp', () => {
    const first = buildWebhookRequest({ eventId, payload, secret, now });
    const later = new Date(now.getTime() + 3_600_000);
    const retry = buildWebhookRequest({ eventId, payload, secret, now: later });
    expect(retry.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(retry.body).toBe(first.body);
    expect(retry.headers['webhook-signature']).not.toBe(first.headers['webhook-signature']);
    expect(verifyWebhookSignature({ secret, headers: retry.headers, body: retry.body, nowS: later.getTime() / 1000 }).valid).toBe(true);
  });

  it('never puts the secret in the headers or body', () => {
    const request = buildWebhookRequest({ eventId, payload, secret, now });
    expect(JSON.stringify(request)).not.toContain(secret);
    expect(JSON.stringify(request)).not.toContain(secret.slice('whsec_'.length));
  });
});
