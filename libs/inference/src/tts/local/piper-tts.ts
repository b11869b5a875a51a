import { basename } from 'node:path';
import { EngineError, type InferenceRuntime, type ModelHandle, type TensorData } from '../../contracts';
import type { TtsEngine, TtsStream } from '../tts-engine';
import type { Phonemizer } from './phonemizer';
import { piperPhonemeIds, readPiperVoice, type PiperVoice } from './piper-voice-config';
import { splitSentences } from './sentence-splitter';
import { SentenceTtsStream, type SentenceAudio } from './sentence-tts-stream';

export interface PiperTtsOptions {
  runtime: InferenceRuntime;
  /** `<voice>.onnx` (with `<voice>.onnx.json` beside it) or a folder holding one voice. */
  modelPath: string;
  phonemizer: Phonemizer;
  /** Speaker for multi-speaker voices when a request names none; default the first id. */
  defaultSpeaker?: string;
  /** Overrides of the voice config's inference scales. */
  lengthScale?: number;
  noiseScale?: number;
  noiseW?: number;
  name?: string;
}

/**
 * Piper (VITS) voices on onnxruntime, sentence by sentence, at the voice's sample rate:
 *   input int64 [1, T], input_lengths int64 [1], scales float32 [3] (noise, length, noise_w),
 *   sid int64 [1] (multi-speaker voices only) -> output float32 [1, 1, 1, N]
 * `voice` in a request names a speaker of a multi-speaker voice.
 */
export class PiperTts implements TtsEngine {
  readonly sampleRate: number;
  private readonly scales: Float32Array;

  private constructor(
    readonly name: string,
    private readonly model: ModelHandle,
    private readonly voice: PiperVoice,
    private readonly phonemizer: Phonemizer,
    private readonly defaultSpeaker: string | undefined,
    options: PiperTtsOptions,
  ) {
    this.sampleRate = voice.sampleRate;
    this.scales = Float32Array.of(options.noiseScale ?? voice.noiseScale, options.lengthScale ?? voice.lengthScale, options.noiseW ?? voice.noiseW);
  }

  static async load(options: PiperTtsOptions): Promise<PiperTts> {
    const name = options.name ?? `piper:${basename(options.modelPath, '.onnx')}`;
    const voice = await readPiperVoice(options.modelPath, name);
    if (options.defaultSpeaker !== undefined && !voice.speakers.has(options.defaultSpeaker)) {
      throw new EngineError(name, 'model_missing', `speaker '${options.defaultSpeaker}' not in the voice (${[...voice.speakers.keys()].join(', ')})`, false);
    }
    // `scales` is one [3] vector for the whole run, not a per-row input: tell the runtime so.
    const batchedInputs: Record<string, number> = voice.multiSpeaker ? { input: 0, input_lengths: 0, sid: 0 } : { input: 0, input_lengths: 0 };
    const model = await options.runtime.loadModel({
      name,
      path: voice.modelPath,
      maxBatchRows: 1,
      batchAxes: { inputs: batchedInputs, outputs: { output: 0 } },
    });
    if (voice.multiSpeaker !== model.inputNames.includes('sid')) {
      throw new EngineError(name, 'model_missing', `config says ${voice.multiSpeaker ? 'multi' : 'single'}-speaker but the model ${model.inputNames.includes('sid') ? 'takes' : 'lacks'} 'sid'`, false);
    }
    return new PiperTts(name, model, voice, options.phonemizer, options.defaultSpeaker, options);
  }

  synthesize(text: string, options: { callId: string; voice?: string; signal?: AbortSignal }): TtsStream {
    const synthesizeSentence = async (sentence: string, signal: AbortSignal): Promise<SentenceAudio> => {
      const speakerId = this.speakerId(options.voice ?? this.defaultSpeaker);
      const phonemes = await this.phonemizer.phonemize(sentence, { voice: this.voice.espeakVoice, signal });
      const ids = piperPhonemeIds(this.voice, phonemes);
      const feeds: Record<string, TensorData> = {
        input: { type: 'int64', data: BigInt64Array.from(ids, (id) => BigInt(id)), dims: [1, ids.length] },
        input_lengths: { type: 'int64', data: BigInt64Array.of(BigInt(ids.length)), dims: [1] },
        scales: { type: 'float32', data: this.scales.slice(), dims: [3] },
      };
      if (this.voice.multiSpeaker) feeds['sid'] = { type: 'int64', data: BigInt64Array.of(BigInt(speakerId)), dims: [1] };
      const result = await this.model.run(feeds, { callId: options.callId, signal });
      const output = result.outputs['output'] ?? Object.values(result.outputs)[0];
      if (!output || output.type !== 'float32') throw new EngineError(this.name, 'inference_failed', 'Piper returned no float32 output', false);
      return { samples: output.data as Float32Array, runMs: result.runMs, queueWaitMs: result.queueWaitMs };
    };
    return new SentenceTtsStream(this.name, this.sampleRate, text, splitSentences(text), synthesizeSentence, options.signal);
  }

  private speakerId(speaker: string | undefined): number {
    if (!this.voice.multiSpeaker || speaker === undefined) return 0;
    const id = this.voice.speakers.get(speaker);
    if (id === undefined) throw new EngineError(this.name, 'bad_request', `unknown speaker '${speaker}' (have ${[...this.voice.speakers.keys()].join(', ')})`, false);
    return id;
  }
}
