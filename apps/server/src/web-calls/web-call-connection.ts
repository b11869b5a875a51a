import type { LiveCallLabels } from '../metrics/live-call-labels';
import type { MeasuredAiUsage } from '@switchboard/billing';
import { AgentConfigError, CallControlError, type AgentCallContext, type AgentEngine, type AgentSession, type CallControl, type ConversationRecorder } from '@switchboard/conversation';
import type { StreamClaim } from '@switchboard/persistence';
import { hashStreamToken } from '@switchboard/telephony';
import type { PinoLogger } from 'nestjs-pino';
import type { RawData, WebSocket } from 'ws';
import type { CallEventBuffer } from '../media/call-event-buffer';
import { closeCallRecords } from '../media/close-call-records';
import { HeldCallerInput } from '../media/held-caller-input';
import { agentEndReason, type CallEndReason, type ConnectionCallEnd } from '../media/call-end-reason';
import { WebAudioInput, WebAudioOutput } from './web-call-audio';
import { parseWebCallMessage, WEB_CALL_AUDIO, WEB_CALL_BYTES_PER_MS, WEB_CALL_CLOSE, type WebCallClientMessage } from './web-call-protocol';
import { WebCallSession } from './web-call-session';
import type { LiveCallRecording } from '../recordings/live-call-recording';
import type { RecordingStart } from '../recordings/call-recording.service';

/** Audio messages and key presses held while the token is claimed: ~10 s of 20 ms messages. */
const MAX_INPUT_HELD_BEFORE_AUTH = 500;
/** Protocol errors recorded on the call; past this many the socket is closed (a peer that only sends garbage). */
const MAX_PROTOCOL_ERRORS = 20;
/** The start message must come this soon after the socket opens. */
const START_TIMEOUT_MS = 10_000;

/** What a web call connection needs from the server; provided by WebCallService. */
export interface WebCallDependencies {
  /** Spends the web call's stream token (web calls only), one atomic statement. */
  claimStream(input: { callId: string; tokenHash: string; streamSid: string; now: Date }): Promise<StreamClaim>;
  finaliseCall(callId: string, end: ConnectionCallEnd): Promise<void>;
  resolveAgent(engine: string): AgentEngine | undefined;
  createEventBuffer(callId: string): CallEventBuffer;
  createRecorder(callId: string, events: CallEventBuffer): ConversationRecorder;
  usage: { open(callId: string): unknown; close(callId: string): MeasuredAiUsage };
  /** Starts the call's recording when its agent config asks for one. */
  startRecording?(start: RecordingStart): LiveCallRecording | undefined;
  logger: PinoLogger;
  onClosed(connection: WebCallConnection): void;
}

type State = 'awaiting_start' | 'authorising' | 'active' | 'ended';

/**
 * One browser call socket: protocol <-> call record <-> agent, the web twin of
 * MediaStreamConnection. Every way out goes through end(), which finalises the call once.
 */
export class WebCallConnection {
  private state: State = 'awaiting_start';
  private callId: string | undefined;
  /** The call's metrics labels while its agent runs (GET /metrics: live calls by direction and engine). */
  liveCallLabels: LiveCallLabels | undefined;
  /** What the drain's bound tells the browser when it ends the call. */
  private endMessage: string | undefined;
  private events: CallEventBuffer | undefined;
  private recorder: ConversationRecorder | undefined;
  private agent: AgentSession | undefined;
  private input: WebAudioInput | undefined;
  private recording: LiveCallRecording | undefined;
  /** Monotonic time of the browser's first audio message: the recording's first sample. */
  private firstAudioAtMs: number | undefined;
  private readonly session: WebCallSession;
  private readonly held = new HeldCallerInput(MAX_INPUT_HELD_BEFORE_AUTH);
  private readonly openedAt = Date.now();
  private readonly startTimer: NodeJS.Timeout;
  private recordedErrors = 0;
  /** Why the call ended while its token was being checked: authorise() records it once the claim settles. */
  private endedWhileAuthorising: CallEndReason | undefined;
  private pcm = new Int16Array(WEB_CALL_AUDIO.sampleRate / 50);

  constructor(
    private readonly socket: WebSocket,
    private readonly deps: WebCallDependencies,
  ) {
    this.session = new WebCallSession(
      {
        sendBinary: (frame) => this.socket.readyState === this.socket.OPEN && this.socket.send(frame),
        sendText: (text) => this.socket.readyState === this.socket.OPEN && this.socket.send(text),
      },
      (name) => this.agent?.onMarkEchoed(name, true),
    );
    this.startTimer = setTimeout(() => this.protocolError('start_timeout', `no start message within ${START_TIMEOUT_MS / 1000} s`, true), START_TIMEOUT_MS);
    this.startTimer.unref();
    socket.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    socket.on('close', () => void this.end('connection_lost'));
    socket.on('error', (error) => this.deps.logger.warn({ callId: this.callId, err: error }, 'web call socket error'));
  }

  get activeCallId(): string | undefined {
    return this.callId;
  }

  async shutdown(): Promise<void> {
    await this.end('server_shutdown');
  }

  /** The drain's bound passed with this call live: the browser is sent the message with the end (it has no phone line to speak it on). */
  async endWithMessage(message: string): Promise<void> {
    this.endMessage = message;
    this.events?.add('drain_message', { message });
    await this.end(this.callId === undefined ? 'server_shutdown' : 'drain_timeout');
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    if (this.state === 'ended') return;
    const bytes = data as Buffer; // ws's default binaryType: one Buffer per message
    if (isBinary) return this.onAudio(bytes);
    const parsed = parseWebCallMessage(bytes.toString('utf8'));
    if (!parsed.ok) return this.protocolError(parsed.code, parsed.message, false);
    this.onControl(parsed.message);
  }

  private onAudio(bytes: Buffer): void {
    if (bytes.length % 2 !== 0) {
      // Not PCM16: nothing sensible can be made of it, and guessing would put noise in the agent's ears.
      this.protocolError('odd_audio_length', `audio messages are PCM16 (an even number of bytes), got ${bytes.length}`, true, WEB_CALL_CLOSE.unsupportedData);
      return;
    }
    this.session.counters.audioMessagesIn += 1;
    this.session.counters.audioBytesIn += bytes.length;
    this.firstAudioAtMs ??= performance.now();
    if (this.state === 'active' && this.agent && this.input) {
      const samples = this.samplesOf(bytes);
      this.recording?.callerPcm(samples);
      this.input.deliver(samples, this.agent);
    } else if (this.state === 'awaiting_start' || this.state === 'authorising') {
      if (!this.held.holdFrame(bytes)) this.protocolError('held_input_limit', `more than ${MAX_INPUT_HELD_BEFORE_AUTH} messages before the call started; send start first`, true, WEB_CALL_CLOSE.protocolError);
    }
  }

  private onControl(message: WebCallClientMessage): void {
    switch (message.type) {
      case 'start':
        if (this.state !== 'awaiting_start') return this.protocolError('unexpected_start', 'the call has already started', false);
        this.state = 'authorising';
        clearTimeout(this.startTimer);
        void this.authorise(message.callId, message.token).catch((error: unknown) => {
          this.deps.logger.error({ err: error }, 'web call could not be started');
          void this.end('agent_error', WEB_CALL_CLOSE.serverError);
        });
        return;
      case 'mark': {
        const outcome = this.session.markEchoed(message.name);
        if (outcome === null) return this.protocolError('unknown_mark', `mark "${message.name.slice(0, 40)}" was not sent or was already echoed`, false);
        this.agent?.onMarkEchoed(outcome.name, outcome.wasCleared);
        return;
      }
      case 'dtmf':
        this.events?.add('dtmf', { digit: message.digit });
        if (this.agent) this.agent.onDtmf(message.digit);
        else if (!this.held.holdDigit(message.digit)) this.protocolError('held_input_limit', 'too much input before the call started', true, WEB_CALL_CLOSE.protocolError);
        return;
      case 'hangup':
        this.events?.add('stream_stopped', { by: 'browser' });
        void this.end('stream_stopped', WEB_CALL_CLOSE.normal);
        return;
    }
  }

  /** The socket's bytes as samples (copied into a reused array: a Buffer may sit at an odd offset). */
  private samplesOf(bytes: Uint8Array): Int16Array {
    const count = bytes.length / 2;
    if (this.pcm.length < count) this.pcm = new Int16Array(count);
    const samples = this.pcm.subarray(0, count);
    new Uint8Array(samples.buffer, samples.byteOffset, bytes.length).set(bytes);
    return samples;
  }

  private async authorise(callId: string, token: string): Promise<void> {
    const claim = await this.deps.claimStream({ callId, tokenHash: hashStreamToken(token), streamSid: `web-${callId}`, now: new Date() });
    if (claim.outcome !== 'ok') {
      this.deps.logger.warn({ callId, verdict: claim.outcome }, 'web call refused: stream token rejected');
      this.sendText({ type: 'error', code: 'invalid_token', message: 'The call or its token is unknown, used or expired. Ask for a new web call.' });
      return this.end(undefined, WEB_CALL_CLOSE.policy);
    }
    if (this.state !== 'authorising') {
      // The call ended while the token was checked: it is ours, so it is finalised here.
      if (this.endedWhileAuthorising) await this.deps.finaliseCall(callId, { endReason: this.endedWhileAuthorising, endedAt: new Date() });
      return;
    }
    const call = claim.context;
    this.callId = callId;
    this.events = this.deps.createEventBuffer(callId);
    this.events.add('stream_started', { transport: 'web', audio: WEB_CALL_AUDIO });
    const engine = this.deps.resolveAgent(call.agentEngine);
    if (!engine) {
      this.events.add('error', { code: 'agent_unavailable', engine: call.agentEngine });
      return this.end('agent_error', WEB_CALL_CLOSE.serverError);
    }
    this.recorder = this.deps.createRecorder(callId, this.events);
    this.deps.usage.open(callId);
    const context: AgentCallContext = {
      callId,
      organizationId: call.organizationId,
      agentId: call.agentId,
      agentConfigVersion: call.agentConfigVersion,
      config: call.agentConfig,
      streamParameters: { ...call.variables },
      direction: call.direction,
      callerNumber: call.fromNumber,
      calledNumber: call.toNumber,
      callStartedAt: call.startedAt,
      answeredBy: null,
      recorder: this.recorder,
      callControl: this.callControl(call.testRunId !== null),
      endCall: (reason: string) => {
        setImmediate(() => void this.end(agentEndReason(reason), WEB_CALL_CLOSE.normal));
      },
    };
    try {
      const audio = engine.describeAudio?.(context) ?? engine.audio;
      this.agent = engine.createSession(context, new WebAudioOutput(audio.outputSampleRate, this.session, audio.outputEncoding));
      this.input = new WebAudioInput(audio.inputSampleRate, audio.inputEncoding);
      this.input.checkAgent(this.agent);
    } catch (error) {
      this.events.add('error', { code: 'agent_config_refused', engine: engine.name, message: error instanceof AgentConfigError ? error.message : String(error) });
      this.deps.logger.warn({ callId, err: error }, 'web call agent could not start: its config was refused');
      return this.end('agent_error', WEB_CALL_CLOSE.serverError);
    }
    this.state = 'active';
    this.liveCallLabels = { direction: call.direction, engine: engine.name };
    this.sendText({ type: 'started', callId, audio: WEB_CALL_AUDIO });
    this.deps.logger.info({ callId, engine: engine.name }, 'web call started');
    this.recording = this.deps.startRecording?.({
      callId,
      organizationId: call.organizationId,
      agentConfig: call.agentConfig,
      callStartedAt: call.startedAt,
      sampleRate: WEB_CALL_AUDIO.sampleRate,
      originMs: this.firstAudioAtMs ?? performance.now(),
    });
    const { agent, input, recording } = this;
    if (recording) this.session.observeOutbound({ frameSent: (pcm) => recording.agentPcmSent(pcm), cleared: () => recording.agentCleared() });
    this.held.replay({
      frame: (bytes) => {
        const samples = this.samplesOf(bytes);
        recording?.callerPcm(samples);
        input.deliver(samples, agent);
      },
      digit: (digit) => agent.onDtmf(digit),
    });
  }

  /**
   * A web call has no phone line: hanging up ends the socket; a transfer to a phone number is not
   * possible. A scenario test's call simulates the transfer instead (the agent's side of it runs
   * for real, is recorded as `call_transferred`, and ends the call as `transferred`), so a suite can
   * check that the agent hands the caller over when it should.
   */
  private callControl(isScenarioTest: boolean): CallControl {
    return {
      hangUp: async () => undefined, // endCall closes the socket, which is the whole call
      transfer: async () => {
        if (isScenarioTest) return;
        throw new CallControlError('a web call cannot be transferred to a phone number');
      },
    };
  }

  private protocolError(code: string, message: string, fatal: boolean, closeCode: number = WEB_CALL_CLOSE.protocolError): void {
    this.session.counters.protocolErrors += 1;
    this.deps.logger.warn({ callId: this.callId, code }, `web call protocol error: ${message}`);
    this.sendText({ type: 'error', code, message });
    if (this.recordedErrors < MAX_PROTOCOL_ERRORS) {
      this.recordedErrors += 1;
      this.events?.add('protocol_error', { code, message, fatal });
    }
    if (fatal || this.session.counters.protocolErrors > MAX_PROTOCOL_ERRORS) void this.end('protocol_error', closeCode);
  }

  private sendText(message: object): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(JSON.stringify(message));
  }

  /** Finalises the call (when this socket owns one) and closes the socket. The first reason wins. */
  private async end(reason: CallEndReason | undefined, closeCode: number = WEB_CALL_CLOSE.normal): Promise<void> {
    if (this.state === 'ended') return;
    this.liveCallLabels = undefined;
    const wasAuthorising = this.state === 'authorising';
    if (wasAuthorising) this.endedWhileAuthorising = reason;
    this.state = 'ended';
    clearTimeout(this.startTimer);
    this.agent?.close(reason ?? 'refused');
    this.session.close();
    this.recording?.finish();
    this.held.discard();
    if (reason && this.socket.readyState === this.socket.OPEN) this.sendText({ type: 'ended', reason, ...(this.endMessage === undefined ? {} : { message: this.endMessage }) });
    if (this.socket.readyState === this.socket.OPEN || this.socket.readyState === this.socket.CONNECTING) this.socket.close(closeCode);
    try {
      // While authorising, authorise() finalises the call once the claim settles (it alone knows whether the call is ours).
      if (this.callId && reason && !wasAuthorising) {
        const counters = this.session.counters;
        this.events?.add('stream_closed', { reason, durationMs: Date.now() - this.openedAt, ...counters, heardMs: Math.round(counters.audioBytesHeard / WEB_CALL_BYTES_PER_MS) });
        await closeCallRecords({
          callId: this.callId,
          reason,
          openedAt: this.openedAt,
          recorder: this.recorder,
          events: this.events,
          usage: this.deps.usage,
          finaliseCall: (callId, end) => this.deps.finaliseCall(callId, end),
          audio: {
            callerAudioMs: Math.round(counters.audioBytesIn / WEB_CALL_BYTES_PER_MS),
            agentAudioSentMs: Math.round(counters.audioBytesOut / WEB_CALL_BYTES_PER_MS),
            agentAudioHeardMs: Math.round(counters.audioBytesHeard / WEB_CALL_BYTES_PER_MS),
          },
        });
        this.deps.logger.info({ callId: this.callId, reason }, 'web call ended');
      }
    } catch (error) {
      this.deps.logger.error({ callId: this.callId, err: error }, 'web call record could not be finalised');
    } finally {
      this.deps.onClosed(this);
    }
  }
}
