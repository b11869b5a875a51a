import { basename } from 'node:path';
import { EngineError, type InferenceRuntime, type ModelHandle } from '../../contracts';
import type { TtsEngine, TtsStream } from '../tts-engine';
import { KOKORO_MAX_PHONEMES, KOKORO_SAMPLE_RATE, KOKORO_STYLE_DIM, readKokoroModelFolder, readKokoroVoice, type KokoroModelFolder } from './kokoro-model-folder';
import type { Phonemizer } from './phonemizer';
import { splitSentences } from './sentence-splitter';
import { SentenceTtsStream, type SentenceAudio } from './sentence-tts-stream';
import { concatFloat32 } from '@switchboard/audio';

export interface KokoroTtsOptions {
  runtime: InferenceRuntime;
  modelDir: string;
  phonemizer: Phonemizer;
  /** Voice used when a request names none; default the first of af_heart or the folder's voices. */
  defaultVoice?: string;
  /** Speaking rate (1 = the voice's own); default 1. */
  speed?: number;
  /** Model file inside the folder, e.g. 'onnx/model_quantized.onnx'; default: found by name. */
  modelFile?: string;
  name?: string;
}

/** Kokoro voice prefixes -> espeak-ng voice for the phonemizer (a: American, b: British English...). */
const ESPEAK_VOICE_BY_PREFIX: Record<string, string> = { a: 'en-us', b: 'en-gb', e: 'es', f: 'fr-fr', h: 'hi', i: 'it', p: 'pt-br' };

/**
 * Kokoro v1.0 (82M, Apache-2.0) on onnxruntime: per sentence, phonemes -> token ids (padded with
 * 0 at both ends) and the voice's style row for that many tokens -> 24 kHz waveform.
 *   input_ids int64 [1, T], style float32 [1, 256], speed float32 [1] -> waveform float32 [1, N]
 */
export class KokoroTts implements TtsEngine {
  readonly sampleRate = KOKORO_SAMPLE_RATE;
  private readonly voiceCache = new Map<string, Promise<Float32Array>>();

  private constructor(
    readonly name: string,
    private readonly model: ModelHandle,
    private readonly idsInput: string,
    private readonly folder: KokoroModelFolder,
    private readonly phonemizer: Phonemizer,
    readonly defaultVoice: string,
    private readonly speed: number,
  ) {}

  static async load(options: KokoroTtsOptions): Promise<KokoroTts> {
    const name = options.name ?? `kokoro:${basename(options.modelDir)}`;
    const speed = options.speed ?? 1;
    if (!(speed > 0 && speed <= 4)) throw new RangeError(`Kokoro speed must be in (0, 4], got ${speed}`);
    const folder = await readKokoroModelFolder(options.modelDir, name, options.modelFile);
    const defaultVoice = options.defaultVoice ?? (folder.voices.has('af_heart') ? 'af_heart' : [...folder.voices.keys()].sort()[0]!);
    if (!folder.voices.has(defaultVoice)) {
      throw new EngineError(name, 'model_missing', `voice '${defaultVoice}' not in ${options.modelDir}/voices (${[...folder.voices.keys()].join(', ')})`, false);
    }
    const model = await options.runtime.loadModel({ name, path: folder.modelPath, maxBatchRows: 1 });
    // kokoro-onnx's first v1.0 export called the ids 'tokens'; onnx-community's calls them 'input_ids'.
    const idsInput = ['input_ids', 'tokens'].find((input) => model.inputNames.includes(input));
    if (!idsInput || !model.inputNames.includes('style') || !model.inputNames.includes('speed')) {
      throw new EngineError(name, 'model_missing', `${folder.modelPath} is not a Kokoro graph (inputs: ${model.inputNames.join(', ')})`, false);
    }
    return new KokoroTts(name, model, idsInput, folder, options.phonemizer, defaultVoice, speed);
  }

  get voices(): string[] {
    return [...this.folder.voices.keys()];
  }

  synthesize(text: string, options: { callId: string; voice?: string; signal?: AbortSignal }): TtsStream {
    const voiceName = options.voice ?? this.defaultVoice;
    const synthesizeSentence = async (sentence: string, signal: AbortSignal): Promise<SentenceAudio> => {
      const voicePath = this.folder.voices.get(voiceName);
      if (!voicePath) throw new EngineError(this.name, 'bad_request', `unknown voice '${voiceName}' (have ${this.voices.join(', ')})`, false);
      const voice = await this.voice(voiceName, voicePath);
      const phonemes = await this.phonemizer.phonemize(sentence, { voice: ESPEAK_VOICE_BY_PREFIX[voiceName[0] ?? 'a'] ?? 'en-us', signal });
      return this.synthesizePhonemes(this.tokenize(phonemes), voice, options.callId, signal);
    };
    return new SentenceTtsStream(this.name, this.sampleRate, text, splitSentences(text), synthesizeSentence, options.signal);
  }

  /** Phoneme characters -> ids; characters outside the vocabulary are dropped (as Kokoro's own tokenizer does). */
  tokenize(phonemes: string): number[] {
    const ids: number[] = [];
    for (const char of phonemes) {
      const id = this.folder.vocab.get(char);
      if (id !== undefined) ids.push(id);
    }
    return ids;
  }

  /** Runs the model once per <= 510 tokens (split at spaces), concatenating the audio. */
  private async synthesizePhonemes(ids: number[], voice: Float32Array, callId: string, signal: AbortSignal): Promise<SentenceAudio> {
    // Nothing pronounceable (e.g. only symbols outside the vocabulary): no model call, no audio.
    if (ids.length === 0) return { samples: new Float32Array(0), runMs: 0, queueWaitMs: 0 };
    const pieces: Float32Array[] = [];
    let runMs = 0;
    let queueWaitMs = 0;
    for (const chunk of chunkAtSpaces(ids, this.folder.vocab.get(' '), KOKORO_MAX_PHONEMES)) {
      const rows = voice.length / KOKORO_STYLE_DIM;
      const row = Math.min(chunk.length, rows - 1);
      const result = await this.model.run(
        {
          [this.idsInput]: { type: 'int64', data: BigInt64Array.from([0, ...chunk, 0], (id) => BigInt(id)), dims: [1, chunk.length + 2] },
          style: { type: 'float32', data: voice.slice(row * KOKORO_STYLE_DIM, (row + 1) * KOKORO_STYLE_DIM), dims: [1, KOKORO_STYLE_DIM] },
          speed: { type: 'float32', data: Float32Array.of(this.speed), dims: [1] },
        },
        { callId, signal },
      );
      runMs += result.runMs;
      queueWaitMs += result.queueWaitMs;
      const waveform = result.outputs['waveform'] ?? Object.values(result.outputs)[0];
      if (!waveform || waveform.type !== 'float32') throw new EngineError(this.name, 'inference_failed', 'Kokoro returned no float32 waveform', false);
      pieces.push(waveform.data as Float32Array);
    }
    return { samples: concatFloat32(pieces), runMs, queueWaitMs };
  }

  private voice(name: string, path: string): Promise<Float32Array> {
    let voice = this.voiceCache.get(name);
    if (!voice) {
      voice = readKokoroVoice(path, this.name);
      this.voiceCache.set(name, voice);
      voice.catch(() => this.voiceCache.delete(name));
    }
    return voice;
  }
}

/** Splits ids into runs of at most `max`, cutting after the last space id where there is one. */
export function chunkAtSpaces(ids: readonly number[], spaceId: number | undefined, max: number): number[][] {
  const chunks: number[][] = [];
  let start = 0;
  while (ids.length - start > max) {
    let cut = start + max;
    for (let i = start + max - 1; i > start; i--) {
      if (ids[i] === spaceId) {
        cut = i + 1;
        break;
      }
    }
    chunks.push(ids.slice(start, cut));
    start = cut;
  }
  if (ids.length - start > 0 || chunks.length === 0) chunks.push(ids.slice(start));
  return chunks;
}
