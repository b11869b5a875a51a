import { EngineError, type RunContext } from '../../contracts';
import type { ByteLevelBpeTokenizer } from './byte-level-bpe-tokenizer';
import { WhisperLogMel } from './features/whisper-log-mel';
import type { WhisperGreedyDecoder } from './whisper-greedy-decoder';
import type { WhisperSpecialTokens } from './whisper-special-tokens';

export interface TranscribeOptions extends RunContext {
  language?: string;
  /** Earlier text (e.g. the agent's question or names), fed as <|startofprev|> context. */
  prompt?: string;
}

export interface Transcription {
  text: string;
  tokens: number[];
  queueWaitMs: number;
  runMs: number;
  decoderSteps: number;
}

/**
 * PCM in, text out: log-mel features per 30 s window, greedy decode, tokenizer decode. Audio
 * longer than one window is transcribed window by window and the texts joined.
 */
export class WhisperTranscriber {
  private readonly features: WhisperLogMel;

  constructor(
    private readonly engine: string,
    private readonly decoder: WhisperGreedyDecoder,
    private readonly tokenizer: ByteLevelBpeTokenizer,
    private readonly tokens: WhisperSpecialTokens,
    featureOptions: ConstructorParameters<typeof WhisperLogMel>[0],
  ) {
    this.features = new WhisperLogMel(featureOptions);
  }

  get melBins(): number {
    return this.features.melBins;
  }

  get frames(): number {
    return this.features.frames;
  }

  /** Samples in one model window (30 s for Whisper). */
  get windowSamples(): number {
    return this.features.windowSamples;
  }

  /** Validates the options up front so a bad language fails before any audio is processed. */
  promptFor(options: TranscribeOptions): number[] {
    return this.tokens.prompt(this.tokenizer, { language: options.language, previousText: options.prompt });
  }

  /**
   * Features of each window are computed synchronously before the first await, so the caller may
   * reuse or grow its buffer as soon as this returns a promise.
   */
  transcribe(pcm16k: Int16Array, options: TranscribeOptions): Promise<Transcription> {
    let prompt: number[];
    try {
      prompt = this.promptFor(options);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    const windowSamples = this.features.windowSamples;
    const windows: Float32Array[] = [];
    for (let start = 0; start < pcm16k.length || windows.length === 0; start += windowSamples) {
      windows.push(this.features.compute(pcm16k.subarray(start, start + windowSamples)));
    }
    return this.decodeWindows(windows, prompt, options);
  }

  private async decodeWindows(windows: Float32Array[], prompt: number[], context: RunContext): Promise<Transcription> {
    const result: Transcription = { text: '', tokens: [], queueWaitMs: 0, runMs: 0, decoderSteps: 0 };
    const texts: string[] = [];
    for (const window of windows) {
      let decoded;
      try {
        decoded = await this.decoder.decode(window, prompt, context);
      } catch (error) {
        throw asEngineError(this.engine, error);
      }
      result.tokens.push(...decoded.tokens);
      result.queueWaitMs += decoded.queueWaitMs;
      result.runMs += decoded.runMs;
      result.decoderSteps += decoded.decoderSteps;
      const text = this.tokenizer.decode(decoded.tokens).trim();
      if (text) texts.push(text);
    }
    result.text = texts.join(' ');
    return result;
  }
}

/** Keeps the code and retryable flag of an EngineError from the runtime, re-attributed to this engine. */
export function asEngineError(engine: string, error: unknown): EngineError {
  if (error instanceof EngineError) {
    return error.engine === engine ? error : new EngineError(engine, error.code, error.message, error.retryable, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new EngineError(engine, 'inference_failed', `transcription failed: ${message}`, false, { cause: error });
}
