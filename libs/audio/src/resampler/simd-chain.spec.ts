import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sineTone } from '../analysis/tone';
import { decodeMulaw } from '../codec/mulaw';
import { readWav } from '../wav/wav';
import { measureBands } from './filter-design/frequency-response';
import { compileFirSimd, FIR_SIMD_MODULE_PATH, renderFirSimdModule } from './kernels/fir-simd-build';
import { firSimdHeap } from './kernels/fir-simd-runtime';
import { FIR_SIMD_WASM_BASE64 } from './kernels/fir-simd.wasm';
import { planStages, QUALITY_TARGETS } from './resampler-plan';
import { concatInt16 as concat, CONVERSIONS, resampleInChunks, resampleInFrames } from '@switchboard/testing';
import { StreamingResampler, type ResamplerKernel } from './streaming-resampler';

/**
 * The WebAssembly SIMD kernel (kernels/fir-simd.wat, simd-chain.ts) against the TypeScript one.
 * The behavioural specs (streaming, quality sweeps, echo chain) run on both kernels already; here:
 * the committed bytes match the .wat, the two kernels agree to 1 LSB, and the shared instance.
 */
const FIXTURES = join(__dirname, '../../../../test/fixtures/speech');

describe('fir-simd.wasm.ts', () => {
  it('is exactly what `npm run build:wasm` makes of fir-simd.wat (edit the .wat, then rebuild)', async () => {
    const bytes = await compileFirSimd();
    expect(Buffer.from(FIR_SIMD_WASM_BASE64, 'base64').equals(Buffer.from(bytes))).toBe(true);
    expect(readFileSync(FIR_SIMD_MODULE_PATH, 'utf8')).toBe(renderFirSimdModule(bytes));
  });
});

/** Speech at any rate: the fixtures (8 kHz mu-law, 16 kHz WAV), else the 16 kHz one resampled. */
function speechAt(sampleRate: number): Int16Array {
  if (sampleRate === 8000) return decodeMulaw(readFileSync(join(FIXTURES, 'order-status.8k.ulaw')));
  const wideband = readWav(readFileSync(join(FIXTURES, 'order-status.16k.wav'))).samples;
  if (sampleRate === 16000) return wideband;
  return resampleInFrames({ inputRate: 16000, outputRate: sampleRate, quality: 'high', kernel: 'typescript' }, wideband);
}

/** -1 dBFS tones, 40 ms each, from 50 Hz to just below Nyquist: pass band, transition, stop band. */
function steppedSweep(sampleRate: number): Int16Array {
  const tones: Int16Array[] = [];
  for (let f = 50; f < sampleRate / 2; f += sampleRate / 41) tones.push(sineTone({ frequencyHz: f, sampleRate, durationMs: 40, amplitudeDbfs: -1 }));
  return concat(tones);
}

function resample(kernel: ResamplerKernel, inputRate: number, outputRate: number, input: Int16Array): Int16Array {
  return resampleInFrames({ inputRate, outputRate, kernel }, input);
}

describe('WASM SIMD kernel vs TypeScript kernel', () => {
  it.each(CONVERSIONS)('%i -> %i: speech and a sweep come out within 1 LSB', (inputRate, outputRate) => {
    for (const input of [speechAt(inputRate), steppedSweep(inputRate)]) {
      const simd = resample('wasm-simd', inputRate, outputRate, input);
      const reference = resample('typescript', inputRate, outputRate, input);
      expect(simd.length).toBe(reference.length);
      let worst = 0;
      let differing = 0;
      for (let i = 0; i < simd.length; i++) {
        const difference = simd[i]! > reference[i]! ? simd[i]! - reference[i]! : reference[i]! - simd[i]!;
        if (difference > worst) worst = difference;
        if (difference !== 0) differing++;
      }
      expect(worst).toBeLessThanOrEqual(1);
      // Rounding noise, not a systematic error: only outputs within ~1e-3 LSB of a .5 flip.
      expect(differing).toBeLessThan(simd.length / 100);
    }
  });

  it('float32 taps keep every prototype at its designed stop band (float32 is good to ~-140 dB)', () => {
    for (const [inputRate, outputRate] of CONVERSIONS) {
      for (const quality of ['telephony', 'high'] as const) {
        for (const { spec, filter } of planStages(inputRate, outputRate, quality)) {
          if (filter.taps.length > 1200) continue; // the sweep specs cover the long Kaiser ones end to end
          const rounded = Float64Array.from(Float32Array.from(filter.taps));
          const figures = measureBands(rounded, spec.dcGain, spec.passEdgeHz / spec.sampleRate, spec.stopEdgeHz / spec.sampleRate, 1500);
          expect(figures.stopbandAttenuationDb).toBeGreaterThanOrEqual(QUALITY_TARGETS[quality].stopbandAttenuationDb - 0.1);
        }
      }
    }
  });
});

describe('the shared WebAssembly instance', () => {
  it('serves every resampler from one memory, tap tables written once per design', () => {
    new StreamingResampler({ inputRate: 24000, outputRate: 8000, kernel: 'wasm-simd' });
    const heap = firSimdHeap()!;
    const tablesEnd = heap.scratch;
    const many = Array.from({ length: 200 }, () => new StreamingResampler({ inputRate: 24000, outputRate: 8000, kernel: 'wasm-simd' }));
    expect(firSimdHeap()).toBe(heap);
    expect(heap.scratch).toBe(tablesEnd);
    const frame = steppedSweep(24000).subarray(0, 480);
    const first = many[0]!.process(frame).slice();
    for (const resampler of many.slice(1)) expect(resampler.process(frame)).toEqual(first);
  });

  it('keeps streams intact when another call grows the memory mid-stream', () => {
    const input = speechAt(16000);
    const frames = (resampler: StreamingResampler, from: number, to: number): Int16Array[] => {
      const parts: Int16Array[] = [];
      for (let offset = from; offset < to; offset += 320) parts.push(resampler.process(input.subarray(offset, offset + 320)).slice());
      return parts;
    };
    const reference = new StreamingResampler({ inputRate: 16000, outputRate: 8000, kernel: 'wasm-simd' });
    const expected = concat(frames(reference, 0, 6400));
    const interrupted = new StreamingResampler({ inputRate: 16000, outputRate: 8000, kernel: 'wasm-simd' });
    const before = frames(interrupted, 0, 3200);
    const memory = firSimdHeap()!.kernel.memory;
    const bytes = memory.buffer.byteLength;
    // Two seconds at 48 kHz in one call needs more scratch than 20 ms frames ever did.
    const big = new StreamingResampler({ inputRate: 48000, outputRate: 8000, kernel: 'wasm-simd' });
    expect(resampleInChunks(big, steppedSweep(48000).subarray(0, 96000), [96000]).length).toBeGreaterThan(0);
    expect(memory.buffer.byteLength).toBeGreaterThan(bytes);
    const after = frames(interrupted, 3200, 6400);
    expect(concat([...before, ...after])).toEqual(expected);
  });
});

describe('the kernel option', () => {
  it("resolves 'auto' to the WASM SIMD kernel here and honours a forced choice", () => {
    expect(new StreamingResampler({ inputRate: 8000, outputRate: 16000 }).kernel).toBe('wasm-simd');
    expect(new StreamingResampler({ inputRate: 8000, outputRate: 16000, kernel: 'typescript' }).kernel).toBe('typescript');
    expect(() => new StreamingResampler({ inputRate: 8000, outputRate: 16000, kernel: 'gpu' as never })).toThrow(expect.objectContaining({ code: 'invalid_kernel' }));
  });

  it('falls back to TypeScript where the runtime has no WebAssembly SIMD', () => {
    const saved = (globalThis as { WebAssembly?: unknown }).WebAssembly;
    try {
      Object.assign(globalThis, { WebAssembly: undefined });
      jest.isolateModules(() => {
        // A fresh module registry, so the runtime probes again (it caches the answer per process).
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const isolated = require('./streaming-resampler') as typeof import('./streaming-resampler');
        const fallback = new isolated.StreamingResampler({ inputRate: 16000, outputRate: 8000 });
        expect(fallback.kernel).toBe('typescript');
        expect(fallback.process(new Int16Array(320))).toHaveLength(160);
        expect(() => new isolated.StreamingResampler({ inputRate: 16000, outputRate: 8000, kernel: 'wasm-simd' })).toThrow(expect.objectContaining({ code: 'unsupported_kernel' }));
      });
    } finally {
      Object.assign(globalThis, { WebAssembly: saved });
    }
  });
});
