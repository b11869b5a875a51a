import { randomBytes } from 'node:crypto';
import { base64DecodedLength, decodeMediaPayload, decodeMediaPayloadInto, encodeMediaPayload } from './media-payload';

describe('media payload base64', () => {
  it('round-trips every length from 0 to 400 bytes', () => {
    const target = Buffer.alloc(512);
    for (let length = 0; length <= 400; length += 1) {
      const bytes = randomBytes(length);
      const base64 = encodeMediaPayload(bytes);
      expect(base64).toBe(bytes.toString('base64'));
      expect(base64DecodedLength(base64)).toBe(length);
      expect(decodeMediaPayloadInto(base64, target)).toBe(length);
      expect(target.subarray(0, length).equals(bytes)).toBe(true);
    }
  });

  it('encodes a Uint8Array view at its own offset, not the start of its buffer', () => {
    const backing = new Uint8Array(400);
    for (let i = 0; i < backing.length; i += 1) backing[i] = i & 0xff;
    const view = backing.subarray(37, 197);
    expect(Buffer.from(encodeMediaPayload(view), 'base64').equals(Buffer.from(view))).toBe(true);
  });

  it('accepts unpadded input, as Node does', () => {
    expect(decodeMediaPayload('AQI')).toEqual(Buffer.from([1, 2]));
    expect(decodeMediaPayload('AQ')).toEqual(Buffer.from([1]));
  });

  it('refuses text that is not clean base64', () => {
    const target = Buffer.alloc(64);
    expect(decodeMediaPayloadInto('AAA*', target)).toBeNull(); // character outside the alphabet
    expect(decodeMediaPayloadInto('AA*A', target)).toBeNull();
    expect(decodeMediaPayloadInto('AAAAA', target)).toBeNull(); // 4n+1 characters
    expect(decodeMediaPayloadInto('AA=A', target)).toBeNull(); // padding in the middle
    expect(decodeMediaPayloadInto('QUJD\nREVG', target)).toBeNull(); // whitespace
    expect(decodeMediaPayloadInto('====', target)).toBeNull();
    expect(decodeMediaPayload('not base64!')).toBeNull();
  });

  it('refuses a target too small instead of truncating the audio', () => {
    const base64 = Buffer.alloc(160, 1).toString('base64');
    expect(decodeMediaPayloadInto(base64, Buffer.alloc(159))).toBeNull();
    expect(decodeMediaPayloadInto(base64, Buffer.alloc(160))).toBe(160);
  });

  it('decodes the empty payload to zero bytes', () => {
    expect(decodeMediaPayloadInto('', Buffer.alloc(0))).toBe(0);
    expect(decodeMediaPayload('')).toEqual(Buffer.alloc(0));
  });

  it('leaves the bytes after the decoded length untouched', () => {
    const target = Buffer.alloc(8, 0xaa);
    expect(decodeMediaPayloadInto(Buffer.from([1, 2, 3]).toString('base64'), target)).toBe(3);
    expect([...target]).toEqual([1, 2, 3, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa]);
  });
});
