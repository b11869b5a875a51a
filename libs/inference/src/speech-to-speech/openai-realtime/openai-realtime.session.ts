import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import type WebSocket from 'ws';
import type { RawData } from 'ws';
import { EngineError } from '../../contracts/engine-error';
import type { EngineTimings } from '../../contracts/engine-timings';
import { ResponseTracker } from '../response-tracker';
import type {
  SpeechToSpeechEventName,
  SpeechToSpeechSession,
  SpeechToSpeechSessionEvents,
  SpeechToSpeechUsage,
} from '../speech-to-speech-engine';
import { addUsage, zeroUsage } from '../speech-to-speech-usage';
import { OPENAI_REALTIME_ENGINE } from './openai-realtime.options';
import {
  engineErrorFromServerError,
  normalisedEventType,
  numberField,
  objectField,
  responseStatusFrom,
  stringField,
  usageFrom,
} from './openai-realtime-server-event';
import { parseObject, rawText } from './openai-realtime-socket';

export interface OpenAiRealtimeSessionInit {
  socket: WebSocket;
  /** Server events that arrived between configuration and this session taking the socket over. */
  earlyMessages: readonly string[];
  callId: string;
  connectTimings: EngineTimings;
  closeTimeoutMs: number;
}

/**
 * One call's OpenAI Realtime conversation. Translates the provider's events into the neutral
 * session events, and owns the one piece of barge-in the runtime cannot do: dropping the audio,
 * transcript and tool calls of a response it cancelled that the server had already sent.
 */
export class OpenAiRealtimeSession implements SpeechToSpeechSession {
  readonly callId: string;
  readonly connectTimings: EngineTimings;
  private readonly totals = zeroUsage();
  private readonly emitter = new EventEmitter();
  private readonly responses = new ResponseTracker();
  /** Function names by item id: beta servers name the function only when the item is added. */
  private readonly functionNames = new Map<string, string>();
  private readonly socket: WebSocket;
  private readonly closeTimeoutMs: number;
  private state: 'open' | 'closing' | 'closed' = 'open';
  private closedPromise: Promise<void> | undefined;
  private lastSocketError: Error | undefined;
  /** Set while early messages are being replayed; live messages and a close wait in it, in order. */
  private replayQueue: (() => void)[] | undefined;

  constructor(init: OpenAiRealtimeSessionInit) {
    this.callId = init.callId;
    this.connectTimings = init.connectTimings;
    this.socket = init.socket;
    this.closeTimeoutMs = init.closeTimeoutMs;
    this.socket.on('message', (data: RawData, isBinary: boolean) => this.onMessage(data, isBinary));
    this.socket.on('error', (error: Error) => {
      this.lastSocketError = error;
    });
    this.socket.on('close', (code: number, reason: Buffer) => {
      const closed = (): void => this.onSocketClosed(code, reason.toString('utf8'));
      if (this.replayQueue !== undefined) this.replayQueue.push(closed);
      else closed();
    });
    // Replay after the constructor returns, so the caller can attach listeners first; messages
    // arriving meanwhile queue behind the early ones to keep the server's order.
    const lostDuringHandOver = this.socket.readyState !== this.socket.OPEN;
    if (init.earlyMessages.length > 0 || lostDuringHandOver) {
      const queue = init.earlyMessages.map((text) => () => this.handleText(text));
      this.replayQueue = queue;
      setImmediate(() => {
        for (let i = 0; i < queue.length; i += 1) queue[i]?.();
        this.replayQueue = undefined;
        // The socket closed between configuration and this session taking it over: report it as any loss.
        if (lostDuringHandOver && this.state === 'open') this.onSocketClosed(1006, 'closed while connecting');
      });
    }
  }

  get usageTotals(): Readonly<SpeechToSpeechUsage> {
    return this.totals;
  }

  get isOpen(): boolean {
    return this.state === 'open';
  }

  on<E extends SpeechToSpeechEventName>(event: E, listener: SpeechToSpeechSessionEvents[E]): this {
    this.emitter.on(event, listener);
    return this;
  }

  off<E extends SpeechToSpeechEventName>(event: E, listener: SpeechToSpeechSessionEvents[E]): this {
    this.emitter.off(event, listener);
    return this;
  }

  sendAudio(audio: Uint8Array): boolean {
    if (!(audio instanceof Uint8Array)) throw this.badRequest('sendAudio takes a Uint8Array');
    if (this.state !== 'open') return false;
    if (audio.byteLength === 0) return true;
    // A view, not a copy; the JSON is concatenated rather than stringified (no per-frame object).
    const base64 = Buffer.from(audio.buffer, audio.byteOffset, audio.byteLength).toString('base64');
    this.socket.send('{"type":"input_audio_buffer.append","audio":"' + base64 + '"}');
    return true;
  }

  submitToolResult(callId: string, output: string): void {
    if (typeof callId !== 'string' || callId.length === 0) throw this.badRequest('submitToolResult: callId must be a non-empty string');
    if (typeof output !== 'string') throw this.badRequest('submitToolResult: output must be a string (serialise objects as JSON)');
    this.requireOpen('submitToolResult');
    this.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: callId, output } });
    this.send({ type: 'response.create' });
    this.responses.requested(performance.now());
  }

  createResponse(options?: { instructions?: string }): void {
    if (options?.instructions !== undefined && typeof options.instructions !== 'string') {
      throw this.badRequest('createResponse: instructions must be a string');
    }
    this.requireOpen('createResponse');
    this.send(options?.instructions === undefined ? { type: 'response.create' } : { type: 'response.create', response: { instructions: options.instructions } });
    this.responses.requested(performance.now());
  }

  cancelResponse(): boolean {
    if (this.state !== 'open') return false;
    const id = this.responses.cancelActive();
    if (id === undefined) return false;
    this.send(id === '' ? { type: 'response.cancel' } : { type: 'response.cancel', response_id: id });
    return true;
  }

  truncate(itemId: string, audioEndMs: number): void {
    if (typeof itemId !== 'string' || itemId.length === 0) throw this.badRequest('truncate: itemId must be a non-empty string');
    if (!(Number.isFinite(audioEndMs) && audioEndMs >= 0)) throw this.badRequest('truncate: audioEndMs must be a number >= 0');
    this.requireOpen('truncate');
    this.send({ type: 'conversation.item.truncate', item_id: itemId, content_index: 0, audio_end_ms: Math.round(audioEndMs) });
  }

  close(): Promise<void> {
    if (this.closedPromise !== undefined) return this.closedPromise;
    this.closedPromise = new Promise<void>((resolve) => {
      if (this.state === 'closed') {
        resolve();
        return;
      }
      this.state = 'closing';
      // A server that never answers the close frame must not hold the call's teardown.
      const timer = setTimeout(() => this.socket.terminate(), this.closeTimeoutMs);
      this.socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      this.socket.close(1000, 'call ended');
    });
    return this.closedPromise;
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    if (isBinary) {
      this.emitError(new EngineError(OPENAI_REALTIME_ENGINE, 'malformed_response', 'Realtime server sent a binary frame; events are JSON text', false));
      return;
    }
    const text = rawText(data);
    if (this.replayQueue !== undefined) this.replayQueue.push(() => this.handleText(text));
    else this.handleText(text);
  }

  private handleText(text: string): void {
    if (this.state === 'closed') return;
    const event = parseObject(text);
    const type = stringField(event, 'type');
    if (event === undefined || type === undefined) {
      this.emitError(
        new EngineError(OPENAI_REALTIME_ENGINE, 'malformed_response', `Realtime server sent a message that is not a JSON event (${text.length} chars); ignored`, false),
      );
      return;
    }
    this.dispatch(normalisedEventType(type), event);
  }

  private dispatch(type: string, event: Record<string, unknown>): void {
    const now = performance.now();
    switch (type) {
      case 'response.created': {
        const id = stringField(objectField(event, 'response'), 'id');
        if (id !== undefined) this.responses.created(id, now);
        return;
      }
      case 'response.output_item.added': {
        const item = objectField(event, 'item');
        const itemId = stringField(item, 'id');
        const name = stringField(item, 'name');
        if (stringField(item, 'type') === 'function_call' && itemId !== undefined && name !== undefined) this.functionNames.set(itemId, name);
        return;
      }
      case 'response.output_audio.delta': {
        const responseId = stringField(event, 'response_id');
        const itemId = stringField(event, 'item_id');
        const delta = stringField(event, 'delta');
        if (responseId === undefined || itemId === undefined || delta === undefined) return this.malformed(type);
        this.responses.created(responseId, now);
        if (this.responses.isCancelled(responseId)) return;
        const audio = Buffer.from(delta, 'base64');
        if (audio.byteLength === 0) return;
        this.responses.audioArrived(responseId, now);
        this.emit('audio', { audio, responseId, itemId });
        return;
      }
      case 'response.output_audio_transcript.delta': {
        const responseId = stringField(event, 'response_id');
        const itemId = stringField(event, 'item_id');
        const delta = stringField(event, 'delta');
        if (responseId === undefined || itemId === undefined || delta === undefined) return this.malformed(type);
        this.responses.created(responseId, now);
        if (this.responses.isCancelled(responseId)) return;
        this.emit('transcript', { role: 'assistant', itemId, text: delta, final: false });
        return;
      }
      case 'response.output_audio_transcript.done': {
        const responseId = stringField(event, 'response_id');
        const itemId = stringField(event, 'item_id');
        const transcript = stringField(event, 'transcript');
        if (responseId === undefined || itemId === undefined || transcript === undefined) return this.malformed(type);
        // Kept even when cancelled: the record should show what the model began to say.
        const interrupted = this.responses.isCancelled(responseId);
        this.emit('transcript', { role: 'assistant', itemId, text: transcript, final: true, ...(interrupted ? { interrupted } : {}) });
        return;
      }
      case 'conversation.item.input_audio_transcription.delta': {
        const itemId = stringField(event, 'item_id');
        const delta = stringField(event, 'delta');
        if (itemId === undefined || delta === undefined) return this.malformed(type);
        this.emit('transcript', { role: 'user', itemId, text: delta, final: false });
        return;
      }
      case 'conversation.item.input_audio_transcription.completed': {
        const itemId = stringField(event, 'item_id');
        const transcript = stringField(event, 'transcript');
        if (itemId === undefined || transcript === undefined) return this.malformed(type);
        this.emit('transcript', { role: 'user', itemId, text: transcript, final: true });
        return;
      }
      case 'conversation.item.input_audio_transcription.failed': {
        const message = stringField(objectField(event, 'error'), 'message') ?? 'no message';
        this.emitError(new EngineError(OPENAI_REALTIME_ENGINE, 'inference_failed', `Caller transcription failed: ${message}`, false));
        return;
      }
      case 'input_audio_buffer.speech_started': {
        this.responses.speechStarted();
        this.emit('speech_started', { itemId: stringField(event, 'item_id') ?? '', audioMs: numberField(event, 'audio_start_ms') ?? 0 });
        return;
      }
      case 'input_audio_buffer.speech_stopped': {
        this.responses.speechStopped(now);
        this.emit('speech_stopped', { itemId: stringField(event, 'item_id') ?? '', audioMs: numberField(event, 'audio_end_ms') ?? 0 });
        return;
      }
      case 'response.function_call_arguments.done': {
        const responseId = stringField(event, 'response_id');
        const itemId = stringField(event, 'item_id');
        const callId = stringField(event, 'call_id');
        const args = stringField(event, 'arguments');
        const name = stringField(event, 'name') ?? (itemId === undefined ? undefined : this.functionNames.get(itemId));
        if (responseId === undefined || callId === undefined || args === undefined || name === undefined) return this.malformed(type);
        if (itemId !== undefined) this.functionNames.delete(itemId);
        this.responses.created(responseId, now);
        // The caller interrupted this turn: acting on its tool call would answer a question they moved on from.
        if (this.responses.isCancelled(responseId)) return;
        this.emit('tool_call', { callId, name, arguments: args, responseId });
        return;
      }
      case 'response.done': {
        const response = objectField(event, 'response');
        const responseId = stringField(response, 'id');
        if (responseId === undefined) return this.malformed(type);
        const usage = usageFrom(response);
        if (usage !== undefined) addUsage(this.totals, usage);
        const timings = this.responses.done(responseId, now);
        this.emit('response_done', { responseId, status: responseStatusFrom(response), usage, timings });
        return;
      }
      case 'error': {
        const error = engineErrorFromServerError(event);
        if (error !== undefined) this.emitError(error);
        return;
      }
      default:
        // Lifecycle and bookkeeping events (session.*, rate_limits.updated, conversation.item.*,
        // response.content_part.*, ...) carry nothing the runtime acts on.
        return;
    }
  }

  private onSocketClosed(code: number, reason: string): void {
    if (this.state === 'closed') return;
    const byClient = this.state === 'closing';
    this.state = 'closed';
    if (byClient) {
      this.emit('closed', { byClient: true });
    } else {
      const detail = reason.length > 0 ? `code ${code}, "${reason}"` : `code ${code}`;
      const error = new EngineError(OPENAI_REALTIME_ENGINE, 'unavailable', `Realtime connection lost (${detail})`, true, {
        ...(this.lastSocketError === undefined ? {} : { cause: this.lastSocketError }),
      });
      this.emitError(error);
      this.emit('closed', { byClient: false, error });
    }
    // The session is finished: let go of the runtime's listeners and per-call state.
    this.emitter.removeAllListeners();
    this.functionNames.clear();
  }

  private emit<E extends SpeechToSpeechEventName>(event: E, payload: Parameters<SpeechToSpeechSessionEvents[E]>[0]): void {
    try {
      this.emitter.emit(event, payload);
    } catch (error) {
      // A throwing listener must not take the socket's message loop (and every call in the process) down.
      this.emitError(
        new EngineError(OPENAI_REALTIME_ENGINE, 'inference_failed', `A "${event}" listener threw: ${String(error)}`, false, { cause: error }),
      );
    }
  }

  private emitError(error: EngineError): void {
    // EventEmitter throws an unheard 'error'; a session error is a report, never a crash.
    if (this.emitter.listenerCount('error') === 0) return;
    try {
      this.emitter.emit('error', error);
    } catch {
      // An error listener that throws has nowhere left to report to.
    }
  }

  private malformed(type: string): void {
    this.emitError(new EngineError(OPENAI_REALTIME_ENGINE, 'malformed_response', `Realtime server event "${type}" lacks required fields; ignored`, false));
  }

  private send(event: Record<string, unknown>): void {
    this.socket.send(JSON.stringify(event));
  }

  private requireOpen(operation: string): void {
    if (this.state !== 'open') {
      throw new EngineError(OPENAI_REALTIME_ENGINE, 'unavailable', `${operation}: the realtime session is closed`, false);
    }
  }

  private badRequest(message: string): EngineError {
    return new EngineError(OPENAI_REALTIME_ENGINE, 'bad_request', message, false);
  }
}
