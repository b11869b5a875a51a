import { mulaw } from 'alawmulaw';
import { AudioError } from '../audio-error';
import { decodeMulaw, decodeMulawSample, encodeMulaw, encodeMulawSample, MULAW_SILENCE } from './mulaw';

const ALL_CODES = Uint8Array.from({ length: 256 }, (_, code) => code);
const ALL_SAMPLES = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);

describe('mu-law codec', () => {
  it('decodes all 256 codes exactly as alawmulaw does', () => {
    expect(Array.from(decodeMulaw(ALL_CODES))).toEqual(Array.from(mulaw.decode(ALL_CODES)));
  });

  it('encodes every int16 value exactly as alawmulaw does', () => {
    const ours = encodeMulaw(ALL_SAMPLES);
    const theirs = mulaw.encode(ALL_SAMPLES);
    let mismatches = 0;
    for (let i = 0; i < ours.length; i++) if (ours[i] !== theirs[i]) mismatches++;
    expect(mismatches).toBe(0);
  });

  it('agrees with its per-sample reference functions', () => {
    expect(decodeMulawSample(0x00)).toBe(-32124);
    expect(decodeMulawSample(0x80)).toBe(32124);
    expect(encodeMulawSample(-32768)).toBe(0x00);
    expect(encodeMulawSample(32767)).toBe(0x80);
  });

  it('decodes silence to 0 and encodes 0 to silence', () => {
    expect(decodeMulaw(Uint8Array.of(MULAW_SILENCE))[0]).toBe(0);
    expect(encodeMulaw(Int16Array.of(0))[0]).toBe(MULAW_SILENCE);
  });

  it('writes into caller-supplied arrays and returns them (no allocation)', () => {
    const pcm = new Int16Array(200).fill(-1234);
    const bytes = new Uint8Array(200).fill(7);
    const frame = Uint8Array.from({ length: 160 }, (_, i) => (i * 37) & 0xff);
    expect(decodeMulaw(frame, pcm)).toBe(pcm);
    expect(Array.from(pcm.subarray(0, 160))).toEqual(Array.from(mulaw.decode(frame)));
    expect(pcm[160]).toBe(-1234); // beyond src.length untouched
    expect(encodeMulaw(pcm.subarray(0, 160), bytes)).toBe(bytes);
    expect(Array.from(bytes.subarray(0, 160))).toEqual(Array.from(mulaw.encode(pcm.subarray(0, 160))));
    expect(bytes[160]).toBe(7);
  });

  it('refuses an output array that is too small, without writing to it', () => {
    const small = new Int16Array(10);
    const error = (() => {
      try {
        decodeMulaw(new Uint8Array(11), small);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(AudioError);
    expect(error).toMatchObject({ code: 'output_too_small', retryable: false });
    expect(() => encodeMulaw(new Int16Array(4), new Uint8Array(3))).toThrow(AudioError);
  });

  it('round-trips within the mu-law quantisation step', () => {
    for (const sample of [0, 1, -1, 100, -100, 1000, 8000, -8000, 32000, -32000]) {
      const decoded = decodeMulaw(encodeMulaw(Int16Array.of(sample)))[0]!;
      // Step size doubles per segment: 4 (near 0) .. 1024 (loudest), so the error stays below ~3%.
      expect(Math.abs(decoded - sample)).toBeLessThanOrEqual(Math.max(8, Math.abs(sample) * 0.04));
    }
  });
});
