import { Pcm16ByteAssembler } from './pcm16-byte-assembler';

describe('Pcm16ByteAssembler', () => {
  const samples = Int16Array.from([0, 1, -1, 32767, -32768, 256, -257, 12345, -12345]);
  const bytes = new Uint8Array(samples.buffer);

  function reassemble(pieces: Uint8Array[]): Int16Array {
    const assembler = new Pcm16ByteAssembler();
    const out = pieces.map((piece) => assembler.push(piece));
    expect(assembler.hasDanglingByte).toBe(false);
    return Int16Array.from(out.flatMap((chunk) => Array.from(chunk)));
  }

  it('recovers every sample whatever byte the stream is cut at, odd cuts included', () => {
    for (let first = 0; first <= bytes.length; first++) {
      for (let second = first; second <= bytes.length; second++) {
        const pieces = [bytes.subarray(0, first), bytes.subarray(first, second), bytes.subarray(second)];
        expect({ first, second, samples: Array.from(reassemble(pieces)) }).toEqual({ first, second, samples: Array.from(samples) });
      }
    }
  });

  it('recovers every sample from one-byte pieces', () => {
    expect(reassemble(Array.from(bytes, (_, i) => bytes.subarray(i, i + 1)))).toEqual(samples);
  });

  it('reports a stream that ended mid-sample', () => {
    const assembler = new Pcm16ByteAssembler();
    expect(assembler.push(Uint8Array.from([1, 2, 3]))).toEqual(Int16Array.from([0x0201]));
    expect(assembler.hasDanglingByte).toBe(true);
  });
});
