import { basename } from 'node:path';
import { EngineError, type InferenceRuntime, type ModelLoadSpec } from '../../contracts';
import type { AsrEngine, AsrSession } from '../asr-engine';
import { LocalWhisperAsrSession } from './local-whisper-asr-session';
import { WhisperGreedyDecoder } from './whisper-greedy-decoder';
import { readWhisperModelFolder, type WhisperDecoderLayout } from './whisper-model-folder';
import { WhisperSpecialTokens } from './whisper-special-tokens';
import { WhisperTranscriber, type TranscribeOptions, type Transcription } from './whisper-transcriber';

export interface LocalWhisperAsrOptions {
  runtime: InferenceRuntime;
  /** A Whisper folder in the Hugging Face ONNX layout (see readWhisperModelFolder). */
  modelDir: string;
  /** Engine and runtime model name; default 'whisper:<folder name>'. */
  name?: string;
  /** ONNX file variant, e.g. '_quantized'; default '' (full precision). */
  fileSuffix?: string;
  /** Language when a session names none (multilingual models); default 'en'. */
  defaultLanguage?: string;
  /**
   * While the caller speaks, re-decode the buffered audio after every this many ms of new audio
   * and report it as a partial. 0 (default): partials off, only the final transcript.
   */
  partialIntervalMs?: number;
  /** Most 30 s windows encoded in one run, across calls (default 8; 1: no batching). */
  encoderBatchRows?: number;
  /** Most calls' decoder steps (one token each) run as one batch (default 16; 1: no batching). */
  decoderBatchRows?: number;
}

const DEFAULT_ENCODER_BATCH_ROWS = 8;
const DEFAULT_DECODER_BATCH_ROWS = 16;

/**
 * Local Whisper-family ASR on onnxruntime sessions hosted by the injected InferenceRuntime: log-mel
 * features in TypeScript, encoder once per window, greedy decoding with the KV cache when the
 * folder has the merged decoder, tokenizer decode from tokenizer.json.
 */
export class LocalWhisperAsr implements AsrEngine {
  readonly sampleRate = 16000 as const;
  readonly supportsPartials: boolean;

  private constructor(
    readonly name: string,
    readonly decoderLayout: WhisperDecoderLayout,
    private readonly transcriber: WhisperTranscriber,
    private readonly options: LocalWhisperAsrOptions,
  ) {
    this.supportsPartials = (options.partialIntervalMs ?? 0) > 0;
  }

  static async load(options: LocalWhisperAsrOptions): Promise<LocalWhisperAsr> {
    const partialIntervalMs = options.partialIntervalMs ?? 0;
    if (!Number.isFinite(partialIntervalMs) || partialIntervalMs < 0) {
      throw new RangeError(`partialIntervalMs must be a finite number >= 0, got ${partialIntervalMs}`);
    }
    const name = options.name ?? `whisper:${basename(options.modelDir)}`;
    const folder = await readWhisperModelFolder(options.modelDir, name, options.fileSuffix);
    const tokens = new WhisperSpecialTokens(folder, name);
    const encoderBatchRows = options.encoderBatchRows ?? DEFAULT_ENCODER_BATCH_ROWS;
    if (!Number.isInteger(encoderBatchRows) || encoderBatchRows < 1) throw new RangeError(`encoderBatchRows must be a positive integer, got ${encoderBatchRows}`);
    const decoderBatchRows = options.decoderBatchRows ?? DEFAULT_DECODER_BATCH_ROWS;
    if (!Number.isInteger(decoderBatchRows) || decoderBatchRows < 1) throw new RangeError(`decoderBatchRows must be a positive integer, got ${decoderBatchRows}`);
    // Windows of calls whose turns end together are encoded as one batch (the runtime gathers only
    // while every worker is busy, so a lone call never waits for company). Decoding is a sequence
    // per utterance whose KV cache stays in the worker; the steps of calls decoding together run
    // as one batch where their caches have the same length (Whisper's decoder has no attention
    // mask, so a shorter cache cannot be padded): windows encoded together decode in lockstep.
    const [encoder, decoder] = await Promise.all([
      options.runtime.loadModel({ name: `${name}/encoder`, path: folder.encoderPath, maxBatchRows: encoderBatchRows }),
      options.runtime.loadModel({
        name: `${name}/decoder`,
        path: folder.decoderPath,
        maxBatchRows: 1,
        batchingFor: whisperDecoderBatching(decoderBatchRows),
      }),
    ]);
    checkDecoderInputs(name, decoder.inputNames, folder.decoderLayout, folder.decoderLayers);
    const melBins = folder.preprocessor.feature_size ?? folder.config.num_mel_bins ?? 80;
    const frames = folder.preprocessor.nb_max_frames ?? 3000;
    const greedy = new WhisperGreedyDecoder(
      name,
      encoder,
      decoder,
      { layout: folder.decoderLayout, layers: folder.decoderLayers, heads: folder.decoderHeads, headDim: folder.headDim, melBins, frames },
      tokens,
      folder.tokenizer.vocabSize,
    );
    const transcriber = new WhisperTranscriber(name, greedy, folder.tokenizer, tokens, {
      melBins,
      frames,
      sampleRate: folder.preprocessor.sampling_rate ?? 16000,
      nFft: folder.preprocessor.n_fft ?? 400,
      hopLength: folder.preprocessor.hop_length ?? 160,
    });
    return new LocalWhisperAsr(name, folder.decoderLayout, transcriber, { ...options, partialIntervalMs });
  }

  createSession(options: { callId: string; language?: string; prompt?: string }): AsrSession {
    const transcribeOptions: TranscribeOptions = {
      callId: options.callId,
      language: options.language ?? this.options.defaultLanguage,
      prompt: options.prompt,
    };
    // A language the model lacks fails here, at the start of the utterance, not at its end.
    this.transcriber.promptFor(transcribeOptions);
    return new LocalWhisperAsrSession(this.name, this.transcriber, transcribeOptions, this.options.partialIntervalMs ?? 0);
  }

  /** One complete utterance (16 kHz PCM16 mono) to text. */
  transcribe(pcm16k: Int16Array, options: TranscribeOptions = {}): Promise<Transcription> {
    return this.transcriber.transcribe(pcm16k, { ...options, language: options.language ?? this.options.defaultLanguage });
  }
}

/** config.json and the decoder graph must agree on the layers, or every decode would fail later. */
function checkDecoderInputs(engine: string, inputNames: readonly string[], layout: WhisperDecoderLayout, layers: number): void {
  const expected = ['input_ids', 'encoder_hidden_states'];
  if (layout === 'merged') {
    for (let layer = 0; layer < layers; layer++) {
      for (const name of ['decoder.key', 'decoder.value', 'encoder.key', 'encoder.value']) expected.push(`past_key_values.${layer}.${name}`);
    }
    expected.push('use_cache_branch');
  }
  const missing = expected.filter((name) => !inputNames.includes(name));
  const unexpected = inputNames.filter((name) => !expected.includes(name));
  if (missing.length > 0 || unexpected.length > 0) {
    throw new EngineError(
      engine,
      'model_missing',
      `decoder inputs do not match config.json (decoder_layers=${layers}, ${layout}): missing [${missing.join(', ')}], unexpected [${unexpected.join(', ')}]`,
      false,
    );
  }
}

/**
 * How Whisper decoder steps of different calls join: every input has the batch first but the
 * merged export's `use_cache_branch`, which the batch shares; no padding, as the decoder has no
 * attention mask (steps join at equal cache lengths).
 */
export function whisperDecoderBatching(maxRows: number): NonNullable<ModelLoadSpec['batchingFor']> {
  return ({ inputs, outputs }) => ({
    batchAxes: {
      inputs: Object.fromEntries(inputs.filter((input) => input !== 'use_cache_branch').map((input) => [input, 0])),
      outputs: Object.fromEntries(outputs.map((output) => [output, 0])),
    },
    sequenceBatching: { maxRows },
  });
}
