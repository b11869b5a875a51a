/**
 * An in-process scripted speech-to-speech engine for realtime session specs: it records what the
 * session sends (audio, response requests, cancels, truncations, tool results) and lets the test
 * play the model's side (audio, transcripts, tool calls, speech events, response ends) one event at
 * a time.
 */
import type {
  SpeechToSpeechConnectOptions,
  SpeechToSpeechEngine,
  SpeechToSpeechEventName,
  SpeechToSpeechResponseStatus,
  SpeechToSpeechSession,
  SpeechToSpeechSessionEvents,
  SpeechToSpeechUsage,
} from '@switchboard/inference';
import { zeroUsage } from '@switchboard/inference';

const NO_USAGE: Readonly<SpeechToSpeechUsage> = Object.freeze(zeroUsage());

/** 100 ms of model audio (8 kHz mu-law). */
export const MODEL_CHUNK_BYTES = 800;

export class ScriptedSpeechSession implements SpeechToSpeechSession {
  readonly callId: string;
  readonly connectTimings = { totalMs: 1, attempts: 1 };
  readonly usageTotals = NO_USAGE;
  isOpen = true;
  audioBytesReceived = 0;
  /** Instructions of every `createResponse`, in order. */
  readonly responseRequests: string[] = [];
  readonly toolResults: { callId: string; output: string }[] = [];
  readonly truncations: { itemId: string; audioEndMs: number }[] = [];
  cancels = 0;
  private readonly listeners = new Map<SpeechToSpeechEventName, ((payload: never) => void)[]>();

  constructor(readonly options: SpeechToSpeechConnectOptions) {
    this.callId = options.callId;
  }

  on<E extends SpeechToSpeechEventName>(event: E, listener: SpeechToSpeechSessionEvents[E]): this {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
    return this;
  }

  off<E extends SpeechToSpeechEventName>(event: E, listener: SpeechToSpeechSessionEvents[E]): this {
    this.listeners.set(event, (this.listeners.get(event) ?? []).filter((candidate) => candidate !== listener));
    return this;
  }

  sendAudio(audio: Uint8Array): boolean {
    if (!this.isOpen) return false;
    this.audioBytesReceived += audio.length;
    return true;
  }

  submitToolResult(callId: string, output: string): void {
    this.toolResults.push({ callId, output });
  }

  createResponse(options?: { instructions?: string }): void {
    this.responseRequests.push(options?.instructions ?? '');
  }

  cancelResponse(): boolean {
    this.cancels += 1;
    return true;
  }

  truncate(itemId: string, audioEndMs: number): void {
    this.truncations.push({ itemId, audioEndMs });
  }

  async close(): Promise<void> {
    this.isOpen = false;
  }

  // ---- the model's side ----------------------------------------------------------------------

  /** `chunks` × 100 ms of the model's audio for one item of a response. */
  speak(responseId: string, itemId: string, chunks: number): void {
    for (let i = 0; i < chunks; i++) this.emit('audio', { responseId, itemId, audio: new Uint8Array(MODEL_CHUNK_BYTES).fill(0x20) });
  }

  transcript(itemId: string, text: string): void {
    this.emit('transcript', { role: 'assistant', itemId, text, final: true });
  }

  toolCall(responseId: string, callId: string, name: string, args = '{}'): void {
    this.emit('tool_call', { responseId, callId, name, arguments: args });
  }

  done(responseId: string, status: SpeechToSpeechResponseStatus = 'completed'): void {
    this.emit('response_done', { responseId, status, usage: NO_USAGE, timings: { totalMs: 1 } });
  }

  speechStarted(): void {
    this.emit('speech_started', { itemId: 'user-item', audioMs: 0 });
  }

  speechStopped(): void {
    this.emit('speech_stopped', { itemId: 'user-item', audioMs: 0 });
  }

  private emit<E extends SpeechToSpeechEventName>(event: E, payload: Parameters<SpeechToSpeechSessionEvents[E]>[0]): void {
    for (const listener of this.listeners.get(event) ?? []) (listener as (value: typeof payload) => void)(payload);
  }
}

export class ScriptedSpeechEngine implements SpeechToSpeechEngine {
  readonly name = 'scripted-speech';
  readonly inputFormat = 'mulaw8k' as const;
  readonly outputFormat = 'mulaw8k' as const;
  readonly sessions: ScriptedSpeechSession[] = [];

  async connect(options: SpeechToSpeechConnectOptions): Promise<SpeechToSpeechSession> {
    const session = new ScriptedSpeechSession(options);
    this.sessions.push(session);
    return session;
  }
}
