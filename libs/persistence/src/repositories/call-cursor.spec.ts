import { decodeCallCursor, encodeCallCursor } from './call-cursor';

describe('call cursor', () => {
  it('round-trips createdAt (millisecond precision) and id exactly', () => {
    const cursor = { createdAt: new Date('2030-01-02T03:04:05.678Z'), id: '0b9c2a47-6f1e-4c39-9d0a-6a1f3b2c4d5e' };
    const encoded = encodeCallCursor(cursor);
    expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/); // URL-safe, no padding
    expect(decodeCallCursor(encoded)).toEqual(cursor);
  });

  it.each([
    ['not base64 JSON', '!!!'],
    ['JSON that is not an object', Buffer.from('42').toString('base64url')],
    ['missing fields', Buffer.from('{}').toString('base64url')],
    ['a bad date', Buffer.from('{"c":"soon","i":"0b9c2a47-6f1e-4c39-9d0a-6a1f3b2c4d5e"}').toString('base64url')],
    ['a non-uuid id', Buffer.from('{"c":"2030-01-01T00:00:00.000Z","i":"1 OR 1=1"}').toString('base64url')],
    ['null', Buffer.from('null').toString('base64url')],
  ])('rejects %s with invalid_input', (_label, encoded) => {
    expect(() => decodeCallCursor(encoded)).toThrow(expect.objectContaining({ code: 'invalid_input', retryable: false }));
  });
});
