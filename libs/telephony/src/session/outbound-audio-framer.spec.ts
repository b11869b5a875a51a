import { MULAW_SILENCE_BYTE, OutboundAudioFramer } from './outbound-audio-framer';

function ramp(length: number, from = 0): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i += 1) bytes[i] = (from + i) % 256;
  return bytes;
}

function collectingFramer(frameBytes = 160) {
  const frames: number[][] = [];
  const framer = new OutboundAudioFramer(frameBytes, (frame) => frames.push([...frame]));
  return { framer, frames };
}

describe('OutboundAudioFramer', () => {
  it('emits whole frames and keeps the remainder across pushes', () => {
    const { framer, frames } = collectingFramer();
    expect(framer.push(ramp(100))).toBe(0);
    expect(framer.pendingByteCount).toBe(100);
    expect(framer.push(ramp(100, 100))).toBe(1);
    expect(framer.pendingByteCount).toBe(40);
    expect(frames).toEqual([[...ramp(160)]]);
  });

  it('splits a long push into several frames, byte-exact and in order', () => {
    const { framer, frames } = collectingFramer();
    const audio = ramp(1000);
    expect(framer.push(audio)).toBe(6);
    expect(framer.pendingByteCount).toBe(40);
    expect(frames.flat()).toEqual([...audio.subarray(0, 960)]);
  });

  it('pads the remainder with mu-law silence on flush', () => {
    const { framer, frames } = collectingFramer();
    framer.push(ramp(50));
    expect(framer.flush()).toBe(110);
    expect(frames).toHaveLength(1);
    expect(frames[0]?.slice(0, 50)).toEqual([...ramp(50)]);
    expect(frames[0]?.slice(50)).toEqual(new Array(110).fill(MULAW_SILENCE_BYTE));
    expect(framer.flush()).toBe(0); // nothing pending: nothing sent
    expect(frames).toHaveLength(1);
  });

  it('discards the remainder without sending it', () => {
    const { framer, frames } = collectingFramer();
    framer.push(ramp(70));
    expect(framer.discard()).toBe(70);
    expect(framer.pendingByteCount).toBe(0);
    framer.push(ramp(160, 7));
    expect(frames).toEqual([[...ramp(160, 7)]]);
  });

  it('reads views at their own offset and supports larger frames', () => {
    const { framer, frames } = collectingFramer(320);
    const backing = ramp(1000);
    framer.push(backing.subarray(10, 340));
    expect(frames).toEqual([[...backing.subarray(10, 330)]]);
    expect(framer.pendingByteCount).toBe(10);
  });

  it('refuses a frame size that is not a positive integer', () => {
    expect(() => new OutboundAudioFramer(0, () => undefined)).toThrow(RangeError);
    expect(() => new OutboundAudioFramer(12.5, () => undefined)).toThrow(RangeError);
  });
});
