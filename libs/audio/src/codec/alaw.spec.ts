import { alaw } from 'alawmulaw';
import { AudioError } from '../audio-error';
import { ALAW_SILENCE, decodeAlaw, decodeAlawSample, encodeAlaw, encodeAlawSample } from './alaw';

const ALL_CODES = Uint8Array.from({ length: 256 }, (_, code) => code);
const ALL_SAMPLES = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);

describe('A-law codec', () => {
  it('decodes all 256 codes exactly as alawmulaw does', () => {
    expect(Array.from(decodeAlaw(ALL_CODES))).toEqual(Array.from(alaw.decode(ALL_CODES)));
  });

  it('encodes every int16 value exactly as alawmulaw does', () => {
    const ours = encodeAlaw(ALL_SAMPLES);
    const theirs = alaw.encode(ALL_SAMPLES);
    let mismatches = 0;
    for (let i = 0; i < ours.length; i++) if (ours[i] !== theirs[i]) mismatches++;
    expect(mismatches).toBe(0);
  });

  it('agrees with its per-sample reference functions', () => {
    expect(decodeAlawSample(0xd5)).toBe(8);
    expect(decodeAlawSample(0x55)).toBe(-8);
    expect(encodeAlawSample(-32768)).toBe(encodeAlawSample(-32767));
  });

  it('uses 0xD5, the quietest positive code, as silence', () => {
    expect(decodeAlaw(Uint8Array.of(ALAW_SILENCE))[0]).toBe(8);
    expect(encodeAlaw(Int16Array.of(0))[0]).toBe(ALAW_SILENCE);
  });

  it('writes into caller-supplied arrays and returns them', () => {
    const pcm = new Int16Array(160);
    const bytes = new Uint8Array(160);
    const frame = Uint8Array.from({ length: 160 }, (_, i) => (i * 91) & 0xff);
    expect(decodeAlaw(frame, pcm)).toBe(pcm);
    expect(Array.from(pcm)).toEqual(Array.from(alaw.decode(frame)));
    expect(encodeAlaw(pcm, bytes)).toBe(bytes);
    expect(Array.from(bytes)).toEqual(Array.from(alaw.encode(pcm)));
  });

  it('refuses an output array that is too small', () => {
    expect(() => decodeAlaw(new Uint8Array(5), new Int16Array(4))).toThrow(AudioError);
    expect(() => encodeAlaw(new Int16Array(5), new Uint8Array(4))).toThrow(/4 samples, 5 needed/);
  });
});
