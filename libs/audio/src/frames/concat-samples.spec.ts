import { concatFloat32, concatPcm16 } from './concat-samples';

describe('concatPcm16 / concatFloat32', () => {
  it('joins PCM16 chunks in order', () => {
    expect(concatPcm16([Int16Array.of(1, 2), Int16Array.of(), Int16Array.of(3)])).toEqual(Int16Array.of(1, 2, 3));
  });

  it('joins float chunks in order', () => {
    expect(Array.from(concatFloat32([Float32Array.of(0.5), Float32Array.of(-0.25, 1)]))).toEqual([0.5, -0.25, 1]);
    expect(concatFloat32([])).toEqual(new Float32Array(0));
  });

  it('returns an empty array for no chunks, and a single chunk as it is', () => {
    expect(concatPcm16([])).toEqual(new Int16Array(0));
    const only = Int16Array.of(7);
    expect(concatPcm16([only])).toBe(only);
  });
});
