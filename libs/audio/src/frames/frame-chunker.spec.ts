import { AudioError } from '../audio-error';
import { ALAW_SILENCE } from '../codec/alaw';
import { MULAW_SILENCE } from '../codec/mulaw';
import { FrameChunker } from './frame-chunker';

function collect<T extends Uint8Array | Int16Array>(): { frames: number[][]; objects: Set<T>; onFrame: (frame: T) => void } {
  const frames: number[][] = [];
  const objects = new Set<T>();
  return {
    frames,
    objects,
    onFrame: (frame: T) => {
      frames.push(Array.from(frame));
      objects.add(frame);
    },
  };
}

describe('FrameChunker', () => {
  it('cuts any sequence of chunk sizes into exact 160-byte mu-law frames, preserving every byte', () => {
    const sink = collect<Uint8Array>();
    const chunker = FrameChunker.mulaw(sink.onFrame);
    const stream = Uint8Array.from({ length: 1000 }, (_, i) => (i * 7) & 0xff);
    let offset = 0;
    let emitted = 0;
    for (const size of [1, 159, 0, 161, 3, 400, 77, 199]) {
      emitted += chunker.push(stream.subarray(offset, offset + size));
      offset += size;
    }
    expect(offset).toBe(1000);
    expect(emitted).toBe(6);
    expect(sink.frames).toHaveLength(6);
    expect(sink.frames.every((frame) => frame.length === 160)).toBe(true);
    expect(sink.frames.flat()).toEqual(Array.from(stream.subarray(0, 960)));
    expect(chunker.pendingLength).toBe(40);
  });

  it('reuses one frame buffer for every frame (no allocation per frame)', () => {
    const sink = collect<Uint8Array>();
    const chunker = FrameChunker.mulaw(sink.onFrame);
    chunker.push(new Uint8Array(160 * 5 + 10));
    chunker.flush();
    expect(sink.frames).toHaveLength(6);
    expect(sink.objects.size).toBe(1);
  });

  it("flush('pad') completes the last frame with the codec's silence value", () => {
    const mulawSink = collect<Uint8Array>();
    const mulawChunker = FrameChunker.mulaw(mulawSink.onFrame);
    mulawChunker.push(Uint8Array.of(1, 2, 3));
    expect(mulawChunker.flush('pad')).toBe(157);
    expect(mulawSink.frames[0]!.slice(0, 4)).toEqual([1, 2, 3, MULAW_SILENCE]);
    expect(mulawSink.frames[0]!.slice(3).every((byte) => byte === 0xff)).toBe(true);

    const alawSink = collect<Uint8Array>();
    const alawChunker = FrameChunker.alaw(alawSink.onFrame);
    alawChunker.push(Uint8Array.of(9));
    alawChunker.flush();
    expect(alawSink.frames[0]!.slice(1).every((byte) => byte === ALAW_SILENCE)).toBe(true);

    const pcmSink = collect<Int16Array>();
    const pcmChunker = FrameChunker.pcm16(16000, pcmSink.onFrame);
    pcmChunker.push(Int16Array.of(-5, 5));
    pcmChunker.flush();
    expect(pcmSink.frames[0]).toHaveLength(320);
    expect(pcmSink.frames[0]!.slice(0, 3)).toEqual([-5, 5, 0]);
  });

  it("flush('partial') hands over the remainder unpadded", () => {
    const sink = collect<Int16Array>();
    const chunker = FrameChunker.pcm16(8000, sink.onFrame);
    chunker.push(Int16Array.from({ length: 170 }, (_, i) => i));
    expect(chunker.flush('partial')).toBe(10);
    expect(sink.frames.map((frame) => frame.length)).toEqual([160, 10]);
    expect(sink.frames[1]).toEqual([160, 161, 162, 163, 164, 165, 166, 167, 168, 169]);
  });

  it('flush with nothing pending emits nothing; discard drops the remainder', () => {
    const sink = collect<Uint8Array>();
    const chunker = FrameChunker.mulaw(sink.onFrame);
    expect(chunker.flush()).toBe(0);
    chunker.push(new Uint8Array(50));
    expect(chunker.discard()).toBe(50);
    expect(chunker.flush()).toBe(0);
    expect(sink.frames).toHaveLength(0);
  });

  it('supports custom frame sizes in bytes or samples', () => {
    const sink = collect<Uint8Array>();
    const chunker = new FrameChunker(Uint8Array, { frameLength: 3, padValue: 0xff, onFrame: sink.onFrame });
    chunker.push(Uint8Array.of(1, 2, 3, 4, 5, 6, 7));
    expect(sink.frames).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(FrameChunker.pcm16(24000, () => undefined).frameLength).toBe(480);
    expect(FrameChunker.mulaw(() => undefined, 40).frameLength).toBe(320);
  });

  it('rejects frame lengths that are not positive whole numbers', () => {
    expect(() => new FrameChunker(Uint8Array, { frameLength: 0, padValue: 0, onFrame: () => undefined })).toThrow(AudioError);
    expect(() => new FrameChunker(Uint8Array, { frameLength: 2.5, padValue: 0, onFrame: () => undefined })).toThrow(AudioError);
    expect(() => FrameChunker.pcm16(22050, () => undefined, 15)).toThrow(/not a whole number of samples/);
  });
});
