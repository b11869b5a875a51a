import { EngineError } from '../../contracts';
import type { RemoteAttempt } from '../../remote/remote-attempt';
import { RemoteHttpClient, type RemoteEndpointOptions, type RemoteResponse } from '../../remote/remote-http-client';
import type { TtsEngine, TtsResult, TtsStream } from '../tts-engine';
import { Pcm16ByteAssembler } from './pcm16-byte-assembler';
import { QueuedTtsStream, type TtsChunkSink } from './queued-tts-stream';

export interface OpenAiSpeechTtsOptions extends RemoteEndpointOptions {
  /** Engine name in errors, logs and the circuit-breaker key; default 'openai-speech'. */
  name?: string;
  /** Default voice when synthesize() names none; default 'alloy'. */
  voice?: string;
  /** What the server's `pcm` format carries; OpenAI: 24000 (16-bit LE mono). */
  sampleRate?: number;
  speed?: number;
  /** Speaking-style instructions (gpt-4o-mini-tts). */
  instructions?: string;
  /** OpenAI rejects longer input; other servers may allow more. Default 4096. */
  maxInputChars?: number;
  extraBody?: Record<string, unknown>;
}

interface OpenedAudio {
  chunks: AsyncIterator<Uint8Array>;
  assembler: Pcm16ByteAssembler;
  firstSamples: Int16Array;
}

/** Content types that mean the server sent an error or a document, not audio. */
const NON_AUDIO_CONTENT_TYPE = /json|text\/|html|xml/i;

/** 4096 characters read aloud is a few minutes of 24 kHz PCM (~14 MB): room for that, no more. */
const SPEECH_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/**
 * Remote text-to-speech over the OpenAI-compatible `POST {baseUrl}/v1/audio/speech` with
 * `response_format: 'pcm'`: raw 16-bit little-endian mono, yielded chunk by chunk as the bytes
 * arrive (Kokoro-FastAPI, openedai-speech and others speak the same API).
 */
export class OpenAiSpeechTts implements TtsEngine {
  readonly name: string;
  readonly sampleRate: number;
  private readonly client: RemoteHttpClient;
  private readonly maxInputChars: number;

  constructor(private readonly options: OpenAiSpeechTtsOptions) {
    this.name = options.name ?? 'openai-speech';
    this.sampleRate = options.sampleRate ?? 24_000;
    if (!Number.isInteger(this.sampleRate) || this.sampleRate <= 0) throw new Error(`${this.name}: sampleRate must be a positive integer, got ${this.sampleRate}`);
    this.maxInputChars = options.maxInputChars ?? 4096;
    this.client = new RemoteHttpClient(this.name, options, {}, SPEECH_MAX_RESPONSE_BYTES);
  }

  synthesize(text: string, options: { callId: string; voice?: string; signal?: AbortSignal }): TtsStream {
    return new QueuedTtsStream(this.sampleRate, this.name, (sink) => this.produce(text, options.voice, sink), options.signal);
  }

  private async produce(text: string, voice: string | undefined, sink: TtsChunkSink): Promise<TtsResult> {
    const input = text.trim();
    if (input.length > this.maxInputChars) {
      throw new EngineError(this.name, 'bad_request', `${this.name}: ${input.length} characters exceed the ${this.maxInputChars}-character limit; split the text`, false);
    }
    if (input === '') return { timings: { totalMs: 0, attempts: 0 }, characters: 0, audioSeconds: 0 };
    const body = {
      ...this.options.extraBody,
      model: this.options.model,
      input,
      voice: voice ?? this.options.voice ?? 'alloy',
      response_format: 'pcm',
      ...(this.options.speed === undefined ? {} : { speed: this.options.speed }),
      ...(this.options.instructions === undefined ? {} : { instructions: this.options.instructions }),
    };
    const url = this.client.url('/v1/audio/speech');
    const operation = this.client.startOperation(sink.signal);
    let attempt: RemoteAttempt | undefined;
    try {
      const opened = await this.client.run(operation, async (current) => this.readFirstAudio(current, await current.postJson(url, body)));
      attempt = opened.attempt;
      const { chunks, assembler, firstSamples } = opened.value;
      let sampleCount = firstSamples.length;
      sink.emit(firstSamples);
      for (let next = await chunks.next(); next.done !== true; next = await chunks.next()) {
        const samples = assembler.push(next.value);
        sampleCount += samples.length;
        sink.emit(samples);
      }
      return { timings: operation.timings(), characters: input.length, audioSeconds: sampleCount / this.sampleRate };
    } catch (error) {
      if (attempt === undefined) throw error;
      // Audio already went out: no retry (the caller heard it); the breaker counts the failure.
      const failure = attempt.failure(error);
      attempt.reportLateFailure(failure);
      throw failure;
    } finally {
      attempt?.dispose();
      operation.dispose();
    }
  }

  /** Reads until the first whole sample arrives: the boundary before which a retry is safe. */
  private async readFirstAudio(attempt: RemoteAttempt, response: RemoteResponse): Promise<OpenedAudio> {
    const contentType = response.headers.get('content-type') ?? '';
    if (NON_AUDIO_CONTENT_TYPE.test(contentType)) {
      const preview = (await attempt.text(response, 200).catch(() => '')).slice(0, 120);
      throw new EngineError(this.name, 'malformed_response', `${this.name}: expected PCM audio, got "${contentType}": ${preview}`, false);
    }
    const chunks = attempt.chunks(response)[Symbol.asyncIterator]();
    const assembler = new Pcm16ByteAssembler();
    for (;;) {
      const next = await chunks.next();
      if (next.done === true) {
        throw new EngineError(this.name, 'malformed_response', `${this.name}: the server answered 200 with no audio`, false);
      }
      const samples = assembler.push(next.value);
      if (samples.length > 0) {
        attempt.firstOutput();
        return { chunks, assembler, firstSamples: samples };
      }
    }
  }
}
