import { writeWav } from '@switchboard/audio';
import { EngineError } from '../../contracts';
import { encodeMultipart } from '../../remote/multipart-body';
import type { RemoteAttempt } from '../../remote/remote-attempt';
import { RemoteHttpClient, type RemoteEndpointOptions } from '../../remote/remote-http-client';
import type { RemotePolicyOverrides } from '../../remote/remote-policy-options';
import type { AsrEngine, AsrPartial, AsrResult, AsrSession } from '../asr-engine';
import { PcmAccumulator } from './pcm-accumulator';

const SAMPLE_RATE = 16_000;

export interface OpenAiTranscriptionAsrOptions extends RemoteEndpointOptions {
  /** Engine name in errors, logs and the circuit-breaker key; default 'openai-transcription'. */
  name?: string;
  /** Default language hint (ISO 639-1) when a session gives none. */
  language?: string;
  /** Default prompt (vocabulary, spelling of names) when a session gives none. */
  prompt?: string;
  temperature?: number;
  /** Longest utterance accepted; default 600 s (OpenAI caps uploads at 25 MB, about 13 min here). */
  maxAudioSeconds?: number;
}

/**
 * The server sends its headers only once the transcript is ready, so "connect" here spans the
 * transcription itself: a few seconds for a phone utterance on Whisper-class servers.
 */
const TRANSCRIPTION_DEFAULTS: RemotePolicyOverrides = {
  timeouts: { connectTimeoutMs: 15_000, firstByteTimeoutMs: 15_000, totalTimeoutMs: 30_000 },
};

/** A transcript is text (verbose JSON at most): a megabyte is hours of speech. */
const TRANSCRIPT_MAX_RESPONSE_BYTES = 1024 * 1024;

/**
 * Remote speech-to-text over the OpenAI-compatible `POST {baseUrl}/v1/audio/transcriptions`
 * (OpenAI, Groq, faster-whisper servers such as speaches, vLLM). The utterance is buffered and
 * sent as one 16 kHz mono WAV when the session finishes; the API has no partial transcripts.
 */
export class OpenAiTranscriptionAsr implements AsrEngine {
  readonly name: string;
  readonly sampleRate = SAMPLE_RATE;
  readonly supportsPartials = false;
  private readonly client: RemoteHttpClient;
  private readonly maxSamples: number;

  constructor(private readonly options: OpenAiTranscriptionAsrOptions) {
    this.name = options.name ?? 'openai-transcription';
    this.client = new RemoteHttpClient(this.name, options, TRANSCRIPTION_DEFAULTS, TRANSCRIPT_MAX_RESPONSE_BYTES);
    const maxAudioSeconds = options.maxAudioSeconds ?? 600;
    if (!(maxAudioSeconds > 0)) throw new Error(`${this.name}: maxAudioSeconds must be positive, got ${maxAudioSeconds}`);
    this.maxSamples = Math.round(maxAudioSeconds * SAMPLE_RATE);
  }

  createSession(options: { callId: string; language?: string; prompt?: string }): AsrSession {
    return new RemoteTranscriptionSession(this.name, this.client, this.maxSamples, {
      model: this.options.model,
      language: options.language ?? this.options.language,
      prompt: options.prompt ?? this.options.prompt,
      temperature: this.options.temperature,
    });
  }
}

interface TranscriptionFields {
  model: string;
  language?: string;
  prompt?: string;
  temperature?: number;
}

class RemoteTranscriptionSession implements AsrSession {
  private readonly audio: PcmAccumulator;
  private overflowed = false;
  private cancelled = false;
  private finishing: Promise<AsrResult> | undefined;
  private cancelInFlight: (() => void) | undefined;

  constructor(
    private readonly engine: string,
    private readonly client: RemoteHttpClient,
    maxSamples: number,
    private readonly fields: TranscriptionFields,
  ) {
    this.audio = new PcmAccumulator(maxSamples);
  }

  pushAudio(pcm16k: Int16Array): void {
    if (this.finishing !== undefined || this.cancelled) {
      throw new EngineError(this.engine, 'bad_request', `${this.engine}: audio pushed after the session was finished or cancelled`, false);
    }
    if (!this.audio.push(pcm16k)) this.overflowed = true;
  }

  onPartial(_listener: (partial: AsrPartial) => void): void {
    // The transcription API returns one final transcript; there are never partials to report.
  }

  finish(): Promise<AsrResult> {
    this.finishing ??= this.transcribe();
    return this.finishing;
  }

  cancel(): void {
    this.cancelled = true;
    this.cancelInFlight?.();
  }

  private async transcribe(): Promise<AsrResult> {
    if (this.cancelled) throw new EngineError(this.engine, 'cancelled', `${this.engine}: cancelled by the caller`, false);
    const audioSeconds = this.audio.sampleCount / SAMPLE_RATE;
    if (this.overflowed) {
      const limitSeconds = this.audio.maxSamples / SAMPLE_RATE;
      throw new EngineError(this.engine, 'bad_request', `${this.engine}: utterance longer than the ${limitSeconds} s limit (maxAudioSeconds)`, false);
    }
    // Nothing was said: no request (servers reject empty or sub-100 ms files anyway).
    if (this.audio.sampleCount === 0) return { text: '', language: this.fields.language, audioSeconds: 0, timings: { totalMs: 0, attempts: 0 } };

    const wav = writeWav({ sampleRate: SAMPLE_RATE, samples: this.audio.samples() });
    const url = this.client.url('/v1/audio/transcriptions');
    const operation = this.client.startOperation();
    this.cancelInFlight = () => operation.cancel();
    try {
      const { value, attempt } = await this.client.run(operation, (current) => this.post(current, url, wav));
      attempt.firstOutput();
      attempt.dispose();
      return { text: value.text, language: value.language ?? this.fields.language, audioSeconds, timings: operation.timings() };
    } finally {
      this.cancelInFlight = undefined;
      operation.dispose();
    }
  }

  private async post(attempt: RemoteAttempt, url: string, wav: Uint8Array): Promise<{ text: string; language?: string }> {
    const fields: Record<string, string> = { model: this.fields.model, response_format: 'json' };
    if (this.fields.language) fields.language = this.fields.language;
    if (this.fields.prompt) fields.prompt = this.fields.prompt;
    if (this.fields.temperature !== undefined) fields.temperature = String(this.fields.temperature);
    const response = await attempt.postMultipart(url, encodeMultipart(fields, { name: 'file', fileName: 'audio.wav', contentType: 'audio/wav', data: wav }));
    const bodyText = await attempt.text(response);
    let body: unknown;
    try {
      body = JSON.parse(bodyText);
    } catch {
      throw new EngineError(this.engine, 'malformed_response', `${this.engine}: transcription body is not JSON: ${bodyText.slice(0, 120)}`, false);
    }
    const { text, language } = (body ?? {}) as { text?: unknown; language?: unknown };
    if (typeof text !== 'string') {
      throw new EngineError(this.engine, 'malformed_response', `${this.engine}: transcription body has no "text" string: ${bodyText.slice(0, 120)}`, false);
    }
    return { text: text.trim(), ...(typeof language === 'string' && language !== '' ? { language } : {}) };
  }
}
