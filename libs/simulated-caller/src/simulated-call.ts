import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import { CallLatencyTracker } from './call-latency';
import { CallResult, buildCallResult } from './call-result';
import { FRAME_DURATION_MS, InboundLine, UtteranceOptions, UtteranceTiming } from './inbound-line';
import { joinUrl, localMediaUrl } from './media-url';
import { openMediaSocket } from './media-socket';
import { PacedTick } from './paced-sender';
import { ReplyWaitOptions, ReplyWaitResult, waitForReplyEnd } from './reply-wait';
import { MarkEcho, PlaybackBuffer } from './playback-buffer';
import { ByteRecorder } from './byte-recorder';
import { ParsedTwiml, parseTwiml } from './twiml-parser';
import { TwilioCallerError } from './twilio-caller.error';
import { SignatureMode, signatureHeaderFor } from './twilio-signature';
import { newSid } from './twilio-sid';
import * as wire from './twilio-stream-messages';
import { CallParties, CallStatus, statusCallbackParams, voiceWebhookParams } from './twilio-webhook-params';
import { waitForEvent } from './wait-for-event';
import { SignedFormResponse, postSignedForm } from './webhook-client';
import { CloseInfo, ConnectMediaOptions, SimulatedTwilioCallEvents, SimulatedTwilioCallOptions } from './simulated-call.options';

/**
 * Plays Twilio for one inbound call against a local server: the signed voice webhook, the media
 * socket with real-time paced frames, the playback buffer that echoes marks and honours `clear`,
 * status callbacks, and the misbehaviours robustness tests need (bad signatures, raw frames,
 * dropping the socket without `stop`). Independent of libs/telephony on purpose.
 */
export class SimulatedTwilioCall extends EventEmitter<SimulatedTwilioCallEvents> {
  readonly parties: CallParties;
  readonly streamSid = newSid('MZ');
  twiml: ParsedTwiml | null = null;
  readonly protocolErrors: string[] = [];
  readonly marksEchoed: MarkEcho[] = [];
  readonly utterances: UtteranceTiming[] = [];

  private readonly serverUrl: string;
  private readonly publicBaseUrl: string;
  private readonly latency = new CallLatencyTracker();
  private readonly received = new ByteRecorder();
  /** Every caller payload that went out on the socket, in order (what a recording's caller side must equal). */
  private readonly sent = new ByteRecorder();
  private readonly line: InboundLine;
  private socket: WebSocket | null = null;
  private mediaSocketRequested = false;
  private playback: PlaybackBuffer | null = null;
  private markTimer: ReturnType<typeof setTimeout> | undefined;
  private sequenceNumber = 0;
  private chunk = 0;
  private statusSequenceNumber = 0;
  private answeredAtMs: number | null = null;
  private endedAtMs: number | null = null;
  private closeInfo: CloseInfo | null = null;
  private hangingUp = false;
  private readonly closedPromise: Promise<CloseInfo>;
  private resolveClosed: (info: CloseInfo) => void = () => undefined;

  constructor(private readonly options: SimulatedTwilioCallOptions) {
    super();
    this.serverUrl = options.serverUrl;
    this.publicBaseUrl = options.publicBaseUrl ?? options.serverUrl;
    this.parties = {
      accountSid: options.accountSid ?? newSid('AC'),
      callSid: options.callSid ?? newSid('CA'),
      from: options.from,
      to: options.to,
    };
    this.closedPromise = new Promise((resolve) => (this.resolveClosed = resolve));
    this.line = new InboundLine(
      {
        sendMedia: (payload, tick) => this.sendMediaFrame(payload, tick),
        sendDtmf: (digit) => this.sendScheduledDtmf(digit),
        onSpeechEnded: (atMs) => this.latency.speechEnded(atMs),
      },
      { idleSilence: options.idleSilence ?? true, onError: (error) => this.recordProtocolError(`caller-side send failed, line stopped: ${String(error)}`) },
    );
  }

  /** Resolves when the media socket has closed, whoever closed it. */
  get closed(): Promise<CloseInfo> {
    return this.closedPromise;
  }

  get isMediaOpen(): boolean {
    return this.socket?.readyState === WebSocket.OPEN && !this.hangingUp;
  }

  /** POSTs the signed voice webhook and parses the TwiML answer. */
  async dial(options: { signature?: SignatureMode } = {}): Promise<ParsedTwiml> {
    const path = this.options.voicePath ?? '/twilio/voice';
    const response = await this.post(path, voiceWebhookParams(this.parties, this.options.extraVoiceParams), options.signature);
    this.twiml = parseTwiml(response.body);
    if (!this.twiml.rejected) this.answeredAtMs = performance.now();
    return this.twiml;
  }

  /** POSTs a signed call status callback (`in-progress` at answer, `completed` at the end, ...). */
  async sendStatusCallback(callStatus: CallStatus, options: { signature?: SignatureMode } = {}): Promise<SignedFormResponse> {
    const endMs = this.endedAtMs ?? performance.now();
    const callDurationSec = this.answeredAtMs === null ? 0 : (endMs - this.answeredAtMs) / 1000;
    const params = statusCallbackParams(this.parties, {
      callStatus,
      sequenceNumber: this.statusSequenceNumber++,
      callDurationSec,
      at: new Date(),
    });
    return this.post(this.options.statusCallbackPath ?? '/twilio/status', params, options.signature);
  }

  /** Opens the media socket, sends `connected` and `start`, and starts the paced inbound line. */
  async connectMedia(options: ConnectMediaOptions = {}): Promise<void> {
    const stream = options.stream ?? this.twiml?.stream;
    if (!stream) {
      throw new TwilioCallerError('CALL_NOT_CONNECTED', 'No <Connect><Stream> to open: dial() first, or the call was rejected', {
        retryable: false,
      });
    }
    if (this.mediaSocketRequested) {
      throw new TwilioCallerError('INVALID_ARGUMENT', 'The media socket was already opened', { retryable: false });
    }
    const url = localMediaUrl(stream.url, this.serverUrl, this.publicBaseUrl);
    const headers: Record<string, string> = {};
    // The upgrade is signed over the Stream url exactly as written in the TwiML, with no params.
    const signature = signatureHeaderFor(options.signature ?? 'valid', this.options.authToken, stream.url);
    if (signature !== undefined) headers['X-Twilio-Signature'] = signature;

    // Claimed before the handshake so a second connectMedia() cannot race this one.
    this.mediaSocketRequested = true;
    const socket = await openMediaSocket(url, headers, options.timeoutMs ?? 10_000, {
      onMessage: (data, isBinary) => this.onSocketMessage(data, isBinary),
      onClose: (code, reason) => this.onSocketClose(code, reason),
      onError: (error) => this.recordProtocolError(`socket error: ${error.message}`),
    });
    this.socket = socket;

    const startedAtMs = performance.now();
    this.playback = new PlaybackBuffer(startedAtMs);
    this.latency.streamStarted(startedAtMs);
    const identity = this.identity();
    socket.send(wire.connectedMessage());
    socket.send(wire.startMessage(this.nextSequenceNumber(), identity, options.customParameters ?? stream.parameters));
    this.line.start(startedAtMs);
  }

  /** Queues caller audio (8 kHz mu-law); resolves once it and its trailing silence have been sent. */
  async streamAudio(mulaw: Uint8Array, options: UtteranceOptions = {}): Promise<UtteranceTiming> {
    const timing = await this.line.enqueue(mulaw, options);
    this.utterances.push(timing);
    return timing;
  }

  /**
   * Resolves once the agent's reply to what the caller said has been heard to its end, or the wait
   * timed out, or the server closed the call (see waitForReplyEnd). `afterMs`: when the caller's
   * last audible audio went out (UtteranceTiming.audibleEndedAtMs).
   */
  waitForReplyEnd(afterMs: number, options: ReplyWaitOptions = {}): Promise<ReplyWaitResult> {
    return waitForReplyEnd({ events: this, playback: () => this.playback, isClosed: () => this.closeInfo !== null }, afterMs, options);
  }

  /** Sends a key press now, between media frames. */
  sendDtmf(digit: string): void {
    if (!/^[0-9*#A-D]$/.test(digit)) throw new TwilioCallerError('INVALID_ARGUMENT', `Not a DTMF digit: "${digit}"`, { retryable: false });
    if (!this.isMediaOpen) throw new TwilioCallerError('SOCKET_NOT_OPEN', 'The media socket is not open', { retryable: false });
    this.sendScheduledDtmf(digit);
  }

  /** Sends any frame as is (malformed JSON, wrong streamSid, binary) for robustness tests. */
  sendRaw(data: string | Uint8Array): void {
    const socket = this.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      throw new TwilioCallerError('SOCKET_NOT_OPEN', 'The media socket is not open', { retryable: false });
    }
    socket.send(data);
  }

  /**
   * Ends the call as Twilio does when the caller hangs up: `stop`, then a normal close. With
   * `awaitEchoMs` (a call to an echo, which sends one frame back per frame it gets) the line stops
   * first and `stop` waits until every frame sent has come back, or that many ms at most: after
   * `stop` nothing received is counted, so a late echo would otherwise read as a lost frame.
   */
  async hangup(options: { closeTimeoutMs?: number; awaitEchoMs?: number } = {}): Promise<CloseInfo> {
    const socket = this.socket;
    if (!socket || this.closeInfo) return this.finishWithoutSocket();
    this.line.stop();
    if (options.awaitEchoMs !== undefined && this.isMediaOpen) await this.echoed(options.awaitEchoMs);
    if (!this.hangingUp && socket.readyState === WebSocket.OPEN) {
      this.settlePlayback();
      socket.send(wire.stopMessage(this.nextSequenceNumber(), this.identity()));
      this.hangingUp = true;
      socket.close(1000, 'call ended');
    }
    const timeout = setTimeout(() => socket.terminate(), options.closeTimeoutMs ?? 2000);
    try {
      return await this.closedPromise;
    } finally {
      clearTimeout(timeout);
    }
  }

  /** Resolves once as many frames came back as went out, the socket closed, or `timeoutMs` passed. */
  private echoed(timeoutMs: number): Promise<void> {
    const caughtUp = (): boolean => this.latency.framesReceived >= this.latency.framesSent;
    if (caughtUp()) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.off('message', onMessage);
        this.off('close', done);
        resolve();
      };
      const onMessage = (): void => {
        if (caughtUp()) done();
      };
      const timer = setTimeout(done, timeoutMs);
      this.on('message', onMessage);
      this.on('close', done);
    });
  }

  /** Peer loss: the TCP connection vanishes without `stop` or a close frame. */
  async dropConnection(): Promise<CloseInfo> {
    const socket = this.socket;
    if (!socket || this.closeInfo) return this.finishWithoutSocket();
    this.line.stop();
    this.hangingUp = true;
    socket.terminate();
    return this.closedPromise;
  }

  /** Resolves with the next server message matching `predicate` (default: any); TIMEOUT error after timeoutMs. */
  waitForMessage(
    predicate: (message: wire.ServerStreamMessage) => boolean = () => true,
    timeoutMs = 5000,
  ): Promise<wire.ServerStreamMessage> {
    return waitForEvent(this, 'message', predicate, timeoutMs);
  }

  /** Everything observed so far (or in total, once the call has ended). */
  result(): CallResult {
    this.settlePlayback();
    return buildCallResult({
      parties: this.parties,
      streamSid: this.streamSid,
      twiml: this.twiml,
      playedMulaw: this.playback?.playedAudio() ?? new Uint8Array(0),
      receivedMulaw: this.received.toUint8Array(),
      sentMulaw: this.sent.toUint8Array(),
      marksEchoed: [...this.marksEchoed],
      utterances: [...this.utterances],
      protocolErrors: [...this.protocolErrors],
      close: this.closeInfo,
      latency: this.latency.summary({
        bytesPlayed: this.playback?.playedBytes ?? 0,
        bytesCleared: this.playback?.clearedBytes ?? 0,
        protocolErrors: this.protocolErrors.length,
        maxSendLateMs: this.line.maxLateMs,
        endedAtMs: this.endedAtMs ?? performance.now(),
      }),
    });
  }

  private async post(path: string, params: Record<string, string>, signature: SignatureMode = 'valid'): Promise<SignedFormResponse> {
    const response = await postSignedForm({
      localUrl: joinUrl(this.serverUrl, path),
      publicUrl: joinUrl(this.publicBaseUrl, path),
      authToken: this.options.authToken,
      params,
      signature,
      timeoutMs: this.options.requestTimeoutMs ?? 10_000,
    });
    if (response.status < 200 || response.status >= 300) {
      throw new TwilioCallerError('WEBHOOK_HTTP_ERROR', `POST ${path} answered HTTP ${response.status}: ${response.body.slice(0, 200)}`, {
        retryable: response.status >= 500 || response.status === 429,
        httpStatus: response.status,
        responseBody: response.body.slice(0, 500),
      });
    }
    return response;
  }

  private sendMediaFrame(payload: Uint8Array, tick: PacedTick): void {
    if (!this.isMediaOpen) return;
    const base64 = Buffer.from(payload.buffer, payload.byteOffset, payload.length).toString('base64');
    this.chunk += 1;
    // Twilio's timestamp is the media time since the stream started (the frame's deadline), not the wall clock.
    const timestampMs = (tick.index + 1) * FRAME_DURATION_MS;
    const message = wire.mediaMessage(this.nextSequenceNumber(), this.streamSid, this.chunk, timestampMs, base64);
    if (!this.sendIfOpen(message)) return;
    this.sent.append(payload);
    this.latency.mediaSent(payload.length, tick.deadlineMs + tick.lateMs);
  }

  /** Key presses from an utterance's schedule; silently dropped once the call is ending. */
  private sendScheduledDtmf(digit: string): void {
    if (!this.isMediaOpen) return;
    if (this.sendIfOpen(wire.dtmfMessage(this.nextSequenceNumber(), this.streamSid, digit))) this.latency.dtmfSent += 1;
  }

  private onSocketMessage(data: WebSocket.RawData, isBinary: boolean): void {
    const nowMs = performance.now();
    if (this.hangingUp || this.closeInfo) return;
    if (isBinary) {
      this.recordProtocolError('binary frame (Twilio expects JSON text frames)');
      return;
    }
    // ws delivers text frames as one Buffer with the default binaryType ('nodebuffer').
    const parsed = wire.parseServerMessage((data as Buffer).toString('utf8'), this.streamSid);
    if (!parsed.ok) {
      this.recordProtocolError(parsed.error);
      return;
    }
    const message = parsed.message;
    const playback = this.playback;
    if (!playback) return;
    if (message.event === 'media') {
      this.received.append(message.payload);
      this.latency.mediaReceived(message.payload.length, nowMs);
      this.echoMarks(playback.enqueueAudio(message.payload, nowMs));
    } else if (message.event === 'mark') {
      this.latency.marksReceived += 1;
      this.echoMarks(playback.enqueueMark(message.name, nowMs));
    } else {
      this.latency.clears += 1;
      this.echoMarks(playback.clear(nowMs));
    }
    this.scheduleMarkTimer();
    this.emit('message', message);
  }

  private onSocketClose(code: number, reason: string): void {
    this.line.stop();
    if (this.markTimer !== undefined) clearTimeout(this.markTimer);
    this.settlePlayback();
    this.endedAtMs = performance.now();
    this.closeInfo = { code, reason, closedBy: this.hangingUp ? 'caller' : 'server' };
    this.hangingUp = true;
    this.emit('close', this.closeInfo);
    this.resolveClosed(this.closeInfo);
  }

  private echoMarks(echoes: MarkEcho[]): void {
    for (const echo of echoes) {
      if (!this.isMediaOpen) return;
      if (!this.sendIfOpen(wire.markEchoMessage(this.nextSequenceNumber(), this.streamSid, echo.name))) continue;
      if (echo.reason === 'played') this.latency.marksEchoed += 1;
      else this.latency.marksCleared += 1;
      this.marksEchoed.push(echo);
      this.emit('markEchoed', echo);
    }
  }

  /** One timer, re-armed for the earliest queued mark whenever the playback queue changes. */
  private scheduleMarkTimer(): void {
    if (this.markTimer !== undefined) clearTimeout(this.markTimer);
    this.markTimer = undefined;
    const dueMs = this.playback?.nextMarkDueMs() ?? null;
    if (dueMs === null) return;
    this.markTimer = setTimeout(() => {
      this.markTimer = undefined;
      if (this.playback && !this.hangingUp) this.echoMarks(this.playback.advance(performance.now()));
      this.scheduleMarkTimer();
    }, Math.max(0, dueMs - performance.now()));
  }

  /** Brings the played-audio recording up to now (marks due by now are echoed if still possible). */
  private settlePlayback(): void {
    if (!this.playback) return;
    const echoes = this.playback.advance(this.endedAtMs ?? performance.now());
    if (!this.hangingUp && !this.closeInfo) this.echoMarks(echoes);
  }

  private sendIfOpen(text: string): boolean {
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN || this.hangingUp) return false;
    this.socket.send(text);
    return true;
  }

  private recordProtocolError(error: string): void {
    this.protocolErrors.push(error);
    this.emit('protocolError', error);
  }

  private finishWithoutSocket(): Promise<CloseInfo> {
    this.line.stop();
    return this.closeInfo ? Promise.resolve(this.closeInfo) : Promise.resolve({ code: 1005, reason: 'never connected', closedBy: 'caller' });
  }

  private identity(): wire.StreamIdentity {
    return { accountSid: this.parties.accountSid, callSid: this.parties.callSid, streamSid: this.streamSid };
  }

  private nextSequenceNumber(): number {
    this.sequenceNumber += 1;
    return this.sequenceNumber;
  }
}
