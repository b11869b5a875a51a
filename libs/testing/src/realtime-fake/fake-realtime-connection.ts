import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import type WebSocket from 'ws';
import { DEFAULT_FAKE_USAGE, type FakeResponseScript } from './fake-realtime-script';

export type FakeRealtimeProtocol = 'ga' | 'beta';

/** When this much caller audio has been appended, the fake plays a whole turn on its own. */
export interface FakeAutoTurn {
  afterAudioMs: number;
  response: FakeResponseScript;
  /** Sent as the caller's transcription (input_audio_transcription.completed) before the response. */
  userTranscript?: string;
}

export interface FakeResponseOutcome {
  responseId: string;
  /** The assistant message item the audio belonged to (what a truncate names). */
  itemId: string;
  status: 'completed' | 'cancelled' | 'incomplete' | 'failed';
  /** Audio deltas sent before the cancel, then the late ones. */
  chunksSent: number;
  lateChunksSent: number;
}

interface ActiveResponse {
  id: string;
  cancelled: boolean;
}

/**
 * The server side of one Realtime WebSocket: records everything the client sends, answers
 * `session.update`, and plays scripted responses. Speaks GA event names, or the beta ones when the
 * client connected with the `OpenAI-Beta: realtime=v1` header.
 */
export class FakeRealtimeConnection {
  /** Every client event, parsed, in arrival order (audio appends included). */
  readonly received: Record<string, any>[] = [];
  /** Client frames that were not JSON objects. */
  readonly unparsable: string[] = [];
  readonly truncations: { itemId: string; contentIndex: number; audioEndMs: number }[] = [];
  readonly toolOutputs: { callId: string; output: string }[] = [];
  /** The session configuration as the client last set it (merged over updates). */
  session: Record<string, any> = {};
  /** Played, in order, on each client `response.create`; an empty response when the queue is empty. */
  readonly responseQueue: FakeResponseScript[] = [];
  autoTurn: FakeAutoTurn | undefined;
  /** Set to make the next `session.update` fail with this invalid_request_error message. */
  sessionUpdateError: string | undefined;
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly events = new EventEmitter();
  private readonly audioChunks: Buffer[] = [];
  private appendedBytes = 0;
  private bytesAtLastTurn = 0;
  private active: ActiveResponse | undefined;
  private counter = 0;

  constructor(
    private readonly socket: WebSocket,
    readonly protocol: FakeRealtimeProtocol,
    readonly model: string,
  ) {
    this.closed = new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString('utf8') })));
    socket.on('message', (data, isBinary) => this.onMessage(isBinary ? '' : (data as Buffer).toString('utf8')));
    this.sendEvent({ type: 'session.created', session: { id: this.id('sess'), model } });
  }

  /** Caller audio appended so far, concatenated exactly as received. */
  get appendedAudio(): Buffer {
    return Buffer.concat(this.audioChunks);
  }

  get appendedAudioMs(): number {
    return this.appendedBytes / this.inputBytesPerMs();
  }

  get isOpen(): boolean {
    return this.socket.readyState === this.socket.OPEN;
  }

  /** Client events of one type, in order. */
  receivedOfType(type: string): Record<string, any>[] {
    return this.received.filter((event) => event.type === type);
  }

  /** Resolves with the first client event of `type` matching `predicate`, already received or yet to come. */
  waitForEvent(type: string, predicate: (event: Record<string, any>) => boolean = () => true, timeoutMs = 5000): Promise<Record<string, any>> {
    const seen = this.received.find((event) => event.type === type && predicate(event));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const listener = (event: Record<string, any>): void => {
        if (event.type !== type || !predicate(event)) return;
        clearTimeout(timer);
        this.events.off('client-event', listener);
        resolve(event);
      };
      const timer = setTimeout(() => {
        this.events.off('client-event', listener);
        reject(new Error(`fake realtime: no client "${type}" event within ${timeoutMs} ms`));
      }, timeoutMs);
      this.events.on('client-event', listener);
    });
  }

  /**
   * Server VAD heard the caller start; returns the item id their speech becomes. Unlike the real
   * server it does not cancel the response in progress itself, so a test sees whether the client's
   * barge-in (`response.cancel`) works on its own.
   */
  speechStarted(itemId = this.id('item'), audioStartMs = Math.round(this.appendedAudioMs)): string {
    this.sendEvent({ type: 'input_audio_buffer.speech_started', audio_start_ms: audioStartMs, item_id: itemId });
    return itemId;
  }

  speechStopped(itemId: string, audioEndMs = Math.round(this.appendedAudioMs)): void {
    this.sendEvent({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: audioEndMs, item_id: itemId });
    this.sendEvent({ type: 'input_audio_buffer.committed', item_id: itemId, previous_item_id: null });
  }

  userTranscript(itemId: string, transcript: string): void {
    this.sendEvent({ type: 'conversation.item.input_audio_transcription.delta', item_id: itemId, content_index: 0, delta: transcript });
    this.sendEvent({ type: 'conversation.item.input_audio_transcription.completed', item_id: itemId, content_index: 0, transcript });
  }

  /** A whole caller turn: speech start and stop, the caller's transcript, then the model's response. */
  async playTurn(response: FakeResponseScript, userTranscript?: string): Promise<FakeResponseOutcome> {
    const itemId = this.speechStarted();
    this.speechStopped(itemId);
    if (userTranscript !== undefined) this.userTranscript(itemId, userTranscript);
    return this.respond(response);
  }

  /** Plays one response; resolves when `response.done` has been sent (or the socket closed). */
  async respond(script: FakeResponseScript): Promise<FakeResponseOutcome> {
    const names = this.eventNames();
    const responseId = this.id('resp');
    const itemId = this.id('item');
    const response: ActiveResponse = { id: responseId, cancelled: false };
    this.active = response;
    const outcome: FakeResponseOutcome = { responseId, itemId, status: script.status ?? 'completed', chunksSent: 0, lateChunksSent: 0 };
    this.sendEvent({ type: 'response.created', response: { id: responseId, object: 'realtime.response', status: 'in_progress', output: [] } });

    let outputIndex = 0;
    if (script.functionCall !== undefined) {
      const callItemId = this.id('item');
      const callId = script.functionCall.callId ?? this.id('call');
      const item = { id: callItemId, type: 'function_call', status: 'in_progress', name: script.functionCall.name, call_id: callId, arguments: '' };
      this.sendEvent({ type: 'response.output_item.added', response_id: responseId, output_index: outputIndex, item });
      this.sendEvent({
        type: 'response.function_call_arguments.done',
        response_id: responseId,
        item_id: callItemId,
        output_index: outputIndex,
        call_id: callId,
        // The beta protocol named the function only on the item; GA repeats it here.
        ...(this.protocol === 'ga' ? { name: script.functionCall.name } : {}),
        arguments: script.functionCall.arguments,
      });
      outputIndex += 1;
    }

    const chunks = script.audioChunks ?? [];
    const words = script.transcript === undefined ? [] : script.transcript.split(/(?<= )/);
    if (chunks.length > 0 || words.length > 0) {
      const message = { id: itemId, type: 'message', role: 'assistant', status: 'in_progress', content: [] };
      this.sendEvent({ type: 'response.output_item.added', response_id: responseId, output_index: outputIndex, item: message });
      // One step per audio chunk (per word when there is no audio). The words keep pace with the
      // audio by bytes, as the real transcript deltas do, however the chunks are sized.
      const steps = chunks.length > 0 ? chunks.length : words.length;
      const totalBytes = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
      let bytesSent = 0;
      let wordsSent = 0;
      for (let step = 0; step < steps && !response.cancelled && this.isOpen; step += 1) {
        const chunk = chunks[step];
        if (chunk !== undefined) {
          this.sendAudioDelta(names.audioDelta, responseId, itemId, outputIndex, chunk);
          outcome.chunksSent += 1;
          bytesSent += chunk.length;
        }
        const lastStep = step === steps - 1;
        const wordsDue = lastStep ? words.length : chunks.length === 0 ? step + 1 : Math.floor((words.length * bytesSent) / totalBytes);
        for (; wordsSent < wordsDue; wordsSent += 1) {
          this.sendEvent({ type: names.transcriptDelta, response_id: responseId, item_id: itemId, output_index: outputIndex, content_index: 0, delta: words[wordsSent] });
        }
        await pause(script.chunkIntervalMs ?? 0);
      }
      if (response.cancelled) {
        for (const late of script.lateChunksAfterCancel ?? []) {
          this.sendAudioDelta(names.audioDelta, responseId, itemId, outputIndex, late);
          outcome.lateChunksSent += 1;
        }
      }
      if (script.transcript !== undefined) {
        const spoken = response.cancelled ? words.slice(0, wordsSent).join('') : script.transcript;
        this.sendEvent({ type: names.transcriptDone, response_id: responseId, item_id: itemId, output_index: outputIndex, content_index: 0, transcript: spoken });
      }
    }
    if (response.cancelled) outcome.status = 'cancelled';
    if (this.active === response) this.active = undefined;
    this.sendEvent({
      type: 'response.done',
      response: { id: responseId, object: 'realtime.response', status: outcome.status, usage: script.usage ?? DEFAULT_FAKE_USAGE },
    });
    return outcome;
  }

  /** Any server event, as given. */
  sendEvent(event: Record<string, unknown>): void {
    if (!this.isOpen) return;
    this.socket.send(JSON.stringify({ event_id: this.id('event'), ...event }));
  }

  /** A text frame sent verbatim (e.g. malformed JSON). */
  sendRaw(text: string): void {
    if (this.isOpen) this.socket.send(text);
  }

  sendError(error: { type: string; code?: string; message: string }): void {
    this.sendEvent({ type: 'error', error: { param: null, event_id: null, code: null, ...error } });
  }

  /** Closes from the server side (a clean close frame with this code). */
  close(code = 1011, reason = 'fake server closing'): void {
    this.socket.close(code, reason);
  }

  /** Drops the TCP connection with no close frame, as a crashed server would. */
  terminate(): void {
    this.socket.terminate();
  }

  private onMessage(text: string): void {
    let event: unknown;
    try {
      event = JSON.parse(text);
    } catch {
      event = undefined;
    }
    if (event === null || typeof event !== 'object' || Array.isArray(event) || typeof (event as { type?: unknown }).type !== 'string') {
      this.unparsable.push(text);
      this.sendError({ type: 'invalid_request_error', code: 'invalid_json', message: 'The client event is not a JSON object with a type' });
      return;
    }
    const clientEvent = event as Record<string, any>;
    this.received.push(clientEvent);
    this.handle(clientEvent);
    this.events.emit('client-event', clientEvent);
  }

  private handle(event: Record<string, any>): void {
    switch (event.type) {
      case 'session.update':
        return this.onSessionUpdate(event.session);
      case 'input_audio_buffer.append':
        return this.onAudioAppended(event.audio);
      case 'response.create':
        void this.respond(this.responseQueue.shift() ?? {});
        return;
      case 'response.cancel': {
        const active = this.active;
        if (active === undefined || (event.response_id !== undefined && event.response_id !== active.id)) {
          this.sendError({ type: 'invalid_request_error', code: 'response_cancel_not_active', message: 'Cancellation failed: no active response found.' });
          return;
        }
        active.cancelled = true;
        this.active = undefined;
        return;
      }
      case 'conversation.item.truncate':
        this.truncations.push({ itemId: event.item_id, contentIndex: event.content_index, audioEndMs: event.audio_end_ms });
        this.sendEvent({ type: 'conversation.item.truncated', item_id: event.item_id, content_index: event.content_index, audio_end_ms: event.audio_end_ms });
        return;
      case 'conversation.item.create':
        if (event.item?.type === 'function_call_output') this.toolOutputs.push({ callId: event.item.call_id, output: event.item.output });
        this.sendEvent({ type: 'conversation.item.created', item: { id: this.id('item'), ...event.item } });
        return;
      default:
        return;
    }
  }

  private onSessionUpdate(session: unknown): void {
    if (this.sessionUpdateError !== undefined) {
      const message = this.sessionUpdateError;
      this.sessionUpdateError = undefined;
      this.sendError({ type: 'invalid_request_error', code: 'invalid_value', message });
      return;
    }
    if (session === null || typeof session !== 'object') {
      this.sendError({ type: 'invalid_request_error', code: 'missing_required_parameter', message: "Missing required parameter: 'session'." });
      return;
    }
    const update = session as Record<string, any>;
    // The GA API refuses updates without the session type; the beta API had none.
    if (this.protocol === 'ga' && update.type !== 'realtime') {
      this.sendError({ type: 'invalid_request_error', code: 'missing_required_parameter', message: "Missing required parameter: 'session.type'." });
      return;
    }
    this.session = { ...this.session, ...update };
    this.sendEvent({ type: 'session.updated', session: this.session });
  }

  private onAudioAppended(audio: unknown): void {
    if (typeof audio !== 'string') {
      this.sendError({ type: 'invalid_request_error', code: 'missing_required_parameter', message: "Missing required parameter: 'audio'." });
      return;
    }
    const bytes = Buffer.from(audio, 'base64');
    this.audioChunks.push(bytes);
    this.appendedBytes += bytes.byteLength;
    const turn = this.autoTurn;
    if (turn !== undefined && (this.appendedBytes - this.bytesAtLastTurn) / this.inputBytesPerMs() >= turn.afterAudioMs) {
      this.bytesAtLastTurn = this.appendedBytes;
      void this.playTurn(turn.response, turn.userTranscript);
    }
  }

  private sendAudioDelta(type: string, responseId: string, itemId: string, outputIndex: number, chunk: Uint8Array): void {
    const delta = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('base64');
    this.sendEvent({ type, response_id: responseId, item_id: itemId, output_index: outputIndex, content_index: 0, delta });
  }

  /** Caller-audio bytes per millisecond in the configured input format (the API's default is 24 kHz PCM16). */
  private inputBytesPerMs(): number {
    const format = this.protocol === 'ga' ? this.session.audio?.input?.format?.type : this.session.input_audio_format;
    return format === 'audio/pcmu' || format === 'g711_ulaw' || format === 'audio/pcma' || format === 'g711_alaw' ? 8 : 48;
  }

  private eventNames(): { audioDelta: string; transcriptDelta: string; transcriptDone: string } {
    return this.protocol === 'ga'
      ? { audioDelta: 'response.output_audio.delta', transcriptDelta: 'response.output_audio_transcript.delta', transcriptDone: 'response.output_audio_transcript.done' }
      : { audioDelta: 'response.audio.delta', transcriptDelta: 'response.audio_transcript.delta', transcriptDone: 'response.audio_transcript.done' };
  }

  private id(prefix: string): string {
    this.counter += 1;
    return `${prefix}_${randomBytes(4).toString('hex')}${this.counter}`;
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)));
}
