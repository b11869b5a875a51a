import { StreamingResampler } from '@switchboard/audio';

/**
 * The resamplers the bench compares, behind one frame-at-a-time interface (Int16 in, Int16 out,
 * state kept across calls). Each adapter does what a caller of that library would have to do
 * per frame (copying into WASM memory, converting to float), and that cost is part of its time.
 */
export interface FrameResampler {
  /** Resamples one frame; the result is valid until the next call. */
  process(frame: Int16Array): Int16Array;
  dispose(): void;
}

export interface ResamplerContender {
  readonly id: 'switchboard' | 'switchboard-ts' | 'speex-q4' | 'libsamplerate-fastest' | 'linear';
  readonly label: string;
  /** For libraries whose construction is asynchronous: get `count` instances ready for create(). */
  prepare?(inputRate: number, outputRate: number, count: number): Promise<void>;
  create(inputRate: number, outputRate: number): FrameResampler;
}

/** Upper bound on a frame's output, with room for implementations that emit unevenly. */
function outputCapacity(inputLength: number, inputRate: number, outputRate: number): number {
  return Math.ceil((inputLength * outputRate) / inputRate) + 64;
}

const MAX_FRAME_SAMPLES = 4096;

/**
 * Ours, 'telephony' quality. 'auto' is what callers get (the WASM SIMD kernel wherever the runtime
 * has WebAssembly SIMD) and is the row --check holds to speex; 'typescript' forces the fallback.
 */
export function switchboardContender(kernel: 'auto' | 'typescript'): ResamplerContender {
  const resolved = new StreamingResampler({ inputRate: 8000, outputRate: 16000, kernel }).kernel;
  return {
    id: kernel === 'auto' ? 'switchboard' : 'switchboard-ts',
    label: resolved === 'wasm-simd' ? 'switchboard (WASM SIMD)' : kernel === 'auto' ? 'switchboard (auto: TS, no SIMD)' : 'switchboard (TS)',
    create(inputRate, outputRate) {
      const resampler = new StreamingResampler({ inputRate, outputRate, quality: 'telephony', kernel });
      return { process: (frame) => resampler.process(frame), dispose: () => undefined };
    },
  };
}

/** Minimal typing of the Emscripten module @echogarden/speex-resampler-wasm exports. */
interface SpeexModule {
  HEAP16: Int16Array;
  HEAPU32: Uint32Array;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  _speex_resampler_init(channels: number, inRate: number, outRate: number, quality: number, errorPointer: number): number;
  _speex_resampler_process_int(state: number, channel: number, input: number, inputLength: number, output: number, outputLength: number): number;
  _speex_resampler_destroy(state: number): void;
}

export async function speexContender(quality = 4): Promise<ResamplerContender> {
  // The SIMD build, as the issue asks (the package's default export is the non-SIMD one).
  const { default: createSpeexModule } = await import('@echogarden/speex-resampler-wasm/simd');
  const speex = (await createSpeexModule()) as SpeexModule;
  return {
    id: 'speex-q4',
    label: `speexdsp q${quality} (WASM SIMD)`,
    create(inputRate, outputRate) {
      const errorPointer = speex._malloc(4);
      const state = speex._speex_resampler_init(1, inputRate, outputRate, quality, errorPointer);
      if (state === 0) throw new Error(`speex_resampler_init failed for ${inputRate} -> ${outputRate}`);
      const capacity = outputCapacity(MAX_FRAME_SAMPLES, inputRate, outputRate);
      const inputPointer = speex._malloc(MAX_FRAME_SAMPLES * 2);
      const outputPointer = speex._malloc(capacity * 2);
      const lengthsPointer = speex._malloc(8);
      const output = new Int16Array(capacity);
      return {
        process(frame) {
          speex.HEAP16.set(frame, inputPointer >> 1);
          speex.HEAPU32[lengthsPointer >> 2] = frame.length;
          speex.HEAPU32[(lengthsPointer >> 2) + 1] = capacity;
          speex._speex_resampler_process_int(state, 0, inputPointer, lengthsPointer, outputPointer, lengthsPointer + 4);
          const produced = speex.HEAPU32[(lengthsPointer >> 2) + 1]!;
          // WASM memory may move when it grows, so results are copied out, as a caller must.
          output.set(speex.HEAP16.subarray(outputPointer >> 1, (outputPointer >> 1) + produced));
          return output.subarray(0, produced);
        },
        dispose() {
          speex._speex_resampler_destroy(state);
          for (const pointer of [errorPointer, inputPointer, outputPointer, lengthsPointer]) speex._free(pointer);
        },
      };
    },
  };
}

interface LibSampleRateSrc {
  full(input: Float32Array, output: Float32Array, outLength: { frames: number }): Float32Array;
  destroy(): void;
}

export async function libsamplerateContender(): Promise<ResamplerContender> {
  const module = (await import('@alexanderolsen/libsamplerate-js')) as unknown as {
    create(channels: number, inRate: number, outRate: number, options: { converterType: number }): Promise<LibSampleRateSrc>;
    ConverterType: { SRC_SINC_FASTEST: number };
  };
  // Its create() is async (it instantiates WASM), so converters are made in prepare() up front.
  const prepared = new Map<string, LibSampleRateSrc[]>();
  return {
    id: 'libsamplerate-fastest',
    label: 'libsamplerate SINC_FASTEST (WASM)',
    create(inputRate, outputRate) {
      const src = prepared.get(`${inputRate}:${outputRate}`)?.pop();
      if (src === undefined) throw new Error(`libsamplerate converter ${inputRate} -> ${outputRate} was not prepared`);
      const capacity = outputCapacity(MAX_FRAME_SAMPLES, inputRate, outputRate);
      const input = new Float32Array(MAX_FRAME_SAMPLES);
      const output = new Float32Array(capacity);
      const pcm = new Int16Array(capacity);
      const produced = { frames: 0 };
      return {
        process(frame) {
          for (let i = 0; i < frame.length; i++) input[i] = frame[i]! / 32768;
          src.full(input.subarray(0, frame.length), output, produced);
          for (let i = 0; i < produced.frames; i++) {
            const v = Math.round(output[i]! * 32768);
            pcm[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
          }
          return pcm.subarray(0, produced.frames);
        },
        dispose: () => src.destroy(),
      };
    },
    async prepare(inputRate, outputRate, count) {
      const key = `${inputRate}:${outputRate}`;
      const list = prepared.get(key) ?? [];
      for (let i = 0; i < count; i++) {
        list.push(await module.create(1, inputRate, outputRate, { converterType: module.ConverterType.SRC_SINC_FASTEST }));
      }
      prepared.set(key, list);
    },
  };
}

/**
 * Naive streaming linear interpolation, as a floor for speed and a ceiling for aliasing: it has no
 * anti-alias filter at all. Position is tracked exactly in units of 1/outputRate of an input sample.
 */
export function linearContender(): ResamplerContender {
  return {
    id: 'linear',
    label: 'naive linear (TS)',
    create(inputRate, outputRate) {
      const output = new Int16Array(outputCapacity(MAX_FRAME_SAMPLES, inputRate, outputRate));
      let previous = 0;
      // Next output's position, in input samples scaled by outputRate, relative to the frame start
      // (-outputRate means "at the previous frame's last sample").
      let position = 0;
      return {
        process(frame) {
          let count = 0;
          const end = (frame.length - 1) * outputRate;
          while (position <= end) {
            const index = Math.floor(position / outputRate);
            const fraction = (position - index * outputRate) / outputRate;
            const left = index < 0 ? previous : frame[index]!;
            // Never read past the frame: an out-of-bounds typed-array read deoptimises V8.
            const right = index + 1 < frame.length ? frame[index + 1]! : left;
            output[count++] = Math.round(left + (right - left) * fraction);
            position += inputRate;
          }
          previous = frame[frame.length - 1] ?? previous;
          position -= frame.length * outputRate;
          return output.subarray(0, count);
        },
        dispose: () => undefined,
      };
    },
  };
}
