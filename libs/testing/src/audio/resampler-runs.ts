import { concatPcm16, StreamingResampler, type ResamplerOptions } from '@switchboard/audio';

/** Both kernels: every behavioural spec runs on each (outputs differ between them by rounding only). */
export const KERNELS = ['wasm-simd', 'typescript'] as const;

/** Feeds `input` in chunks of the given sizes (cycled), then flushes; returns everything produced. */
export function resampleInChunks(resampler: StreamingResampler, input: Int16Array, chunkSizes: readonly number[], flush = true): Int16Array {
  const parts: Int16Array[] = [];
  let offset = 0;
  for (let i = 0; offset < input.length; i++) {
    const size = Math.min(chunkSizes[i % chunkSizes.length]!, input.length - offset);
    parts.push(resampler.process(input.subarray(offset, offset + size)).slice());
    offset += size;
  }
  if (flush) parts.push(resampler.flush());
  return concat(parts);
}

/** 20 ms frames, as a media stream delivers them. */
export function resampleInFrames(options: ResamplerOptions, input: Int16Array, flush = true): Int16Array {
  return resampleInChunks(new StreamingResampler(options), input, [(options.inputRate * 20) / 1000], flush);
}

export function concat(parts: readonly Int16Array[]): Int16Array {
  return concatPcm16(parts);
}

/** Every conversion the issue names, plus the generic ones it gives as examples. */
export const CONVERSIONS: ReadonlyArray<readonly [number, number]> = [
  [8000, 16000],
  [16000, 8000],
  [8000, 24000],
  [24000, 8000],
  [22050, 8000],
  [44100, 16000],
  [48000, 8000],
  [16000, 24000],
];
