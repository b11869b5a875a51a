import { DEFAULT_OUTBOUND_LEAD_MS } from '@switchboard/telephony';
import type { AgentAudioEncoding, AgentAudioOutput, AgentSession } from '@switchboard/conversation';
import type { PinoLogger } from 'nestjs-pino';
import type { RawData, WebSocket } from 'ws';
import type { CallEndReason } from '../call-runtime/call-end-reason';
import type { CallerAudioPath, CallInbound, CallTransport, StreamTiming, TransportCloseCodes } from '../call-runtime/call-transport';
import type { CarriedAudioMs } from '../call-runtime/close-call-records';
import type { LiveCallRecording } from '../recordings/live-call-recording';
import { WebAudioInput, WebAudioOutput } from './web-call-audio';
import { parseWebCallMessage, WEB_CALL_AUDIO, WEB_CALL_BYTES_PER_MS, WEB_CALL_CLOSE, type WebCallClientMessage } from './web-call-protocol';
import { WebCallSession } from './web-call-session';

/** Protocol errors recorded on the call; past this many the socket is closed (a peer that only sends garbage). */
const MAX_PROTOCOL_ERRORS = 20;
/** The start message must come this soon after the socket opens. */
const START_TIMEOUT_MS = 10_000;

const CLOSE_CODES: TransportCloseCodes = {
  normal: WEB_CALL_CLOSE.normal,
  refused: WEB_CALL_CLOSE.policy,
  serverError: WEB_CALL_CLOSE.serverError,
  heldInputLimit: WEB_CALL_CLOSE.protocolError,
};

/** The browser's caller audio (PCM16 16 kHz bytes) to the agent, and to the recording once it runs. */
class WebCallerAudio implements CallerAudioPath {
  private recording: LiveCallRecording | undefined;
  private pcm = new Int16Array(WEB_CALL_AUDIO.sampleRate / 50);

  constructor(
    private readonly input: WebAudioInput,
    private readonly agent: AgentSession,
  ) {}

  deliver(bytes: Uint8Array): void {
    const samples = this.samplesOf(bytes);
    this.recording?.callerPcm(samples);
    this.input.deliver(samples, this.agent);
  }

  record(recording: LiveCallRecording): void {
    this.recording = recording;
  }

  /** The socket's bytes as samples (copied into a reused array: a Buffer may sit at an odd offset). */
  private samplesOf(bytes: Uint8Array): Int16Array {
    const count = bytes.length / 2;
    if (this.pcm.length < count) this.pcm = new Int16Array(count);
    const samples = this.pcm.subarray(0, count);
    new Uint8Array(samples.buffer, samples.byteOffset, bytes.length).set(bytes);
    return samples;
  }
}

/**
 * The browser's call socket as a call transport (see web-call-protocol.ts): binary PCM16 audio
 * and JSON control messages in, framed audio, marks and clears out (WebCallSession). The call
 * itself is the CallRuntime's, which this tells what the browser says.
 */
export class WebCallTransport implements CallTransport {
  readonly name = 'web call';
  readonly closeCodes = CLOSE_CODES;
  readonly recordingSampleRate = WEB_CALL_AUDIO.sampleRate;
  private call!: CallInbound;
  private readonly session: WebCallSession;
  private startTimer: NodeJS.Timeout | undefined;
  private startReceived = false;
  private closed = false;
  private recordedErrors = 0;

  constructor(
    private readonly socket: WebSocket,
    private readonly logger: PinoLogger,
    /** The agent's speech goes out at most this far ahead of the browser's playback (OUTBOUND_AUDIO_LEAD_MS). */
    outboundLeadMs: number = DEFAULT_OUTBOUND_LEAD_MS,
  ) {
    this.session = new WebCallSession(
      { sendBinary: (frame) => this.socket.readyState === this.socket.OPEN && this.socket.send(frame), sendText: (text) => this.sendRaw(text) },
      (name) => this.call.markEchoed(name, true),
      { maxLeadMs: outboundLeadMs },
    );
  }

  /** Starts carrying `call`: from now on what the browser sends reaches it. */
  connect(call: CallInbound): void {
    this.call = call;
    this.startTimer = setTimeout(() => this.protocolError('start_timeout', `no start message within ${START_TIMEOUT_MS / 1000} s`, true), START_TIMEOUT_MS);
    this.startTimer.unref();
    this.socket.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    this.socket.on('close', () => call.connectionLost());
    this.socket.on('error', (error) => this.logger.warn({ callId: call.activeCallId, err: error }, 'web call socket error'));
  }

  agentOutput(format: { outputSampleRate: number; outputEncoding?: AgentAudioEncoding }): AgentAudioOutput {
    return new WebAudioOutput(format.outputSampleRate, this.session, format.outputEncoding);
  }

  callerInput(format: { inputSampleRate: number; inputEncoding?: AgentAudioEncoding }, agent: AgentSession): CallerAudioPath {
    const input = new WebAudioInput(format.inputSampleRate, format.inputEncoding);
    input.checkAgent(agent);
    return new WebCallerAudio(input, agent);
  }

  started(callId: string): void {
    this.sendText({ type: 'started', callId, audio: WEB_CALL_AUDIO });
  }

  refused(): void {
    this.sendText({ type: 'error', code: 'invalid_token', message: 'The call or its token is unknown, used or expired. Ask for a new web call.' });
  }

  tellError(code: string, message: string): void {
    this.session.counters.protocolErrors += 1;
    this.sendText({ type: 'error', code, message });
  }

  recordOutbound(recording: LiveCallRecording): void {
    this.session.observeOutbound({ frameSent: (pcm) => recording.agentPcmSent(pcm), cleared: () => recording.agentCleared() });
  }

  close(reason: CallEndReason | undefined, code: number, message: string | undefined): void {
    this.closed = true;
    clearTimeout(this.startTimer);
    this.session.close();
    if (reason) this.sendText({ type: 'ended', reason, ...(message === undefined ? {} : { message }) });
    if (this.socket.readyState === this.socket.OPEN || this.socket.readyState === this.socket.CONNECTING) this.socket.close(code);
  }

  streamClosedPayload(reason: string, timing: StreamTiming): Record<string, unknown> {
    const counters = this.session.counters;
    return { reason, durationMs: Date.now() - timing.openedAt, ...counters, heardMs: Math.round(counters.audioBytesHeard / WEB_CALL_BYTES_PER_MS) };
  }

  carriedAudio(): CarriedAudioMs {
    const counters = this.session.counters;
    return {
      callerAudioMs: Math.round(counters.audioBytesIn / WEB_CALL_BYTES_PER_MS),
      agentAudioSentMs: Math.round(counters.audioBytesOut / WEB_CALL_BYTES_PER_MS),
      agentAudioHeardMs: Math.round(counters.audioBytesHeard / WEB_CALL_BYTES_PER_MS),
    };
  }

  private onMessage(data: RawData, isBinary: boolean): void {
    if (this.closed) return;
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
    this.call.callerAudio(bytes);
  }

  private onControl(message: WebCallClientMessage): void {
    switch (message.type) {
      case 'start':
        if (this.startReceived) return this.protocolError('unexpected_start', 'the call has already started', false);
        this.startReceived = true;
        clearTimeout(this.startTimer);
        this.call.start({
          callId: message.callId,
          token: message.token,
          streamSid: `web-${message.callId}`,
          account: { kind: 'web' },
          streamStarted: { transport: 'web', audio: WEB_CALL_AUDIO },
          customParameters: {},
        });
        return;
      case 'mark': {
        const outcome = this.session.markEchoed(message.name);
        if (outcome === null) return this.protocolError('unknown_mark', `mark "${message.name.slice(0, 40)}" was not sent or was already echoed`, false);
        this.call.markEchoed(outcome.name, outcome.wasCleared);
        return;
      }
      case 'dtmf':
        this.call.keyPressed(message.digit);
        return;
      case 'hangup':
        this.call.hungUp({ by: 'browser' });
        return;
    }
  }

  private protocolError(code: string, message: string, fatal: boolean, closeCode: number = WEB_CALL_CLOSE.protocolError): void {
    this.session.counters.protocolErrors += 1;
    this.logger.warn({ callId: this.call.activeCallId, code }, `web call protocol error: ${message}`);
    this.sendText({ type: 'error', code, message });
    if (this.recordedErrors < MAX_PROTOCOL_ERRORS) {
      this.recordedErrors += 1;
      this.call.record('protocol_error', { code, message, fatal });
    }
    if (fatal || this.session.counters.protocolErrors > MAX_PROTOCOL_ERRORS) void this.call.end('protocol_error', closeCode);
  }

  private sendText(message: object): void {
    this.sendRaw(JSON.stringify(message));
  }

  private sendRaw(text: string): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(text);
  }
}
