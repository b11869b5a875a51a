import { TELEPHONY_SAMPLE_RATE, TelephonyAudioInput, TelephonyAudioOutput, type AgentAudioEncoding, type AgentAudioOutput, type AgentSession } from '@switchboard/conversation';
import type { StreamAccount } from '@switchboard/persistence';
import {
  DEFAULT_OUTBOUND_LEAD_MS,
  MediaStreamSession,
  STREAM_PARAM_CALL_ID,
  STREAM_PARAM_RESUME_TRANSFER,
  STREAM_PARAM_TOKEN,
  type DtmfEvent,
  type MarkEchoEvent,
  type MediaFrameEvent,
  type MediaStreamHandler,
  type ProtocolErrorEvent,
  type StreamStartedEvent,
  type StreamStoppedEvent,
} from '@switchboard/telephony';
import type { PinoLogger } from 'nestjs-pino';
import type { RawData, WebSocket } from 'ws';
import type { CallEndReason } from '../../call-runtime/call-end-reason';
import type { CallerAudioPath, CallInbound, CallTransport, StreamTiming, TransportCloseCodes } from '../../call-runtime/call-transport';
import type { CarriedAudioMs } from '../../call-runtime/close-call-records';
import type { LiveCallRecording } from '../../recordings/live-call-recording';
import { carriedAudioOf, streamClosedPayload } from './stream-closed';

/** Close codes: 1000 normal end, 1008 policy violation (bad token), 1011 server-side failure. */
const CLOSE_CODES: TransportCloseCodes = { normal: 1000, refused: 1008, serverError: 1011, heldInputLimit: 1011 };
const CLOSE_POLICY = 1008;
/** Protocol errors are recorded on the call up to this count, then only counted (a hostile peer can't flood the log table). */
const MAX_RECORDED_PROTOCOL_ERRORS = 20;

/** Twilio's caller audio (mu-law 8 kHz) to the agent, and to the recording once it runs. */
class TwilioCallerAudio implements CallerAudioPath {
  private recording: LiveCallRecording | undefined;

  constructor(
    private readonly input: TelephonyAudioInput,
    private readonly agent: AgentSession,
  ) {}

  deliver(mulaw: Uint8Array): void {
    this.recording?.callerMulaw(mulaw);
    this.input.deliver(mulaw, this.agent);
  }

  record(recording: LiveCallRecording): void {
    this.recording = recording;
  }
}

/**
 * Twilio's media stream as a call transport: one media WebSocket, its JSON protocol (parsed and
 * framed by MediaStreamSession) and its socket writes, corked per tick. The call itself is the
 * CallRuntime's, which this tells what Twilio says.
 */
export class TwilioMediaStreamTransport implements CallTransport, MediaStreamHandler {
  readonly name = 'media stream';
  readonly closeCodes = CLOSE_CODES;
  readonly recordingSampleRate = TELEPHONY_SAMPLE_RATE;
  readonly session: MediaStreamSession;
  private call!: CallInbound;
  private recordedProtocolErrors = 0;
  private marksCleared = 0;
  private writesCorked = false;
  /** Monotonic time of the first agent frame sent. */
  private firstMediaOutAtMs: number | undefined;

  constructor(
    private readonly socket: WebSocket,
    private readonly logger: PinoLogger,
    /** The Twilio account whose signature opened this socket: only that account's calls may stream on it. */
    private readonly account: StreamAccount = { kind: 'operator' },
    /** The agent's speech goes out at most this far ahead of the caller's playback (OUTBOUND_AUDIO_LEAD_MS). */
    outboundLeadMs: number = DEFAULT_OUTBOUND_LEAD_MS,
  ) {
    this.session = new MediaStreamSession(this, { send: (text) => this.send(text) }, { pacing: { maxLeadMs: outboundLeadMs } });
  }

  /** Starts carrying `call`: from now on what Twilio sends reaches it. */
  connect(call: CallInbound): void {
    this.call = call;
    this.socket.on('message', (data, isBinary) => this.onSocketMessage(data, isBinary));
    this.socket.on('close', () => call.connectionLost());
    this.socket.on('error', (error) => this.logger.warn({ callId: call.activeCallId, err: error }, 'media socket error'));
  }

  onStart(event: StreamStartedEvent): void {
    // The agent sees our TwiML's parameters, the call id too, but never the token.
    const { [STREAM_PARAM_TOKEN]: token, [STREAM_PARAM_RESUME_TRANSFER]: resumeTransfer, ...customParameters } = event.customParameters;
    this.call.start({
      callId: event.customParameters[STREAM_PARAM_CALL_ID],
      token,
      streamSid: event.streamSid,
      account: this.account,
      streamStarted: { streamSid: event.streamSid, tracks: event.tracks, mediaFormat: event.mediaFormat },
      customParameters,
      ...(resumeTransfer !== undefined && { resumeTransfer }),
      carrierCallId: event.callSid,
    });
  }

  onMedia(event: MediaFrameEvent): void {
    this.call.callerAudio(event.payload);
  }

  onDtmf(event: DtmfEvent): void {
    this.call.keyPressed(event.digit);
  }

  onMark(event: MarkEchoEvent): void {
    // Marks come back several times a second per call: they are counted (stream_closed reports
    // how many, how many a clear discarded, and how much audio was heard), not stored one row each.
    if (event.wasCleared) this.marksCleared += 1;
    this.call.markEchoed(event.name, event.wasCleared);
  }

  onStop(event: StreamStoppedEvent): void {
    this.call.hungUp({ callSid: event.callSid ?? null });
  }

  onProtocolError(event: ProtocolErrorEvent): void {
    this.logger.warn({ callId: this.call.activeCallId, code: event.code, excerpt: event.rawExcerpt }, `media protocol error: ${event.message}`);
    if (this.recordedProtocolErrors < MAX_RECORDED_PROTOCOL_ERRORS) {
      this.recordedProtocolErrors += 1;
      this.call.record('protocol_error', { code: event.code, message: event.message, fatal: event.fatal });
    }
    if (event.fatal) void this.call.end('protocol_error', CLOSE_POLICY);
  }

  agentOutput(format: { outputSampleRate: number; outputEncoding?: AgentAudioEncoding }): AgentAudioOutput {
    // An agent that declares mu-law gets (and gives) Twilio's bytes untouched in that direction.
    return new TelephonyAudioOutput(format.outputSampleRate, this.session, format.outputEncoding);
  }

  callerInput(format: { inputSampleRate: number; inputEncoding?: AgentAudioEncoding }, agent: AgentSession): CallerAudioPath {
    const input = new TelephonyAudioInput(format.inputSampleRate, format.inputEncoding);
    input.checkAgent(agent);
    return new TwilioCallerAudio(input, agent);
  }

  started(): void {
    // Twilio needs no word that the call was taken: the agent's audio says so.
  }

  refused(): void {
    // Twilio's protocol has no message for it: the close code (policy) says it.
  }

  recordOutbound(recording: LiveCallRecording): void {
    this.session.observeOutbound({ frameSent: (frame) => recording.agentMulawSent(frame), cleared: () => recording.agentCleared() });
  }

  close(_reason: CallEndReason | undefined, code: number): void {
    this.session.markTransportClosed();
    if (this.socket.readyState === this.socket.OPEN || this.socket.readyState === this.socket.CONNECTING) this.socket.close(code);
  }

  streamClosedPayload(reason: string, timing: StreamTiming): Record<string, unknown> {
    return streamClosedPayload(reason, this.session.counters, { openedAt: timing.openedAt, firstResponseMs: this.firstResponseMs(timing), marksCleared: this.marksCleared });
  }

  carriedAudio(): CarriedAudioMs {
    return carriedAudioOf(this.session.counters);
  }

  private onSocketMessage(data: RawData, isBinary: boolean): void {
    if (isBinary) {
      this.onProtocolError({ code: 'invalid_json', message: 'binary frame received; Twilio sends JSON text', rawExcerpt: '', fatal: false });
      return;
    }
    // ws delivers text frames as one Buffer with the default binaryType ('nodebuffer').
    this.session.receive((data as Buffer).toString('utf8'));
  }

  private send(text: string): void {
    if (this.socket.readyState !== this.socket.OPEN) return;
    this.coalesceWritesThisTick();
    this.socket.send(text);
    if (this.firstMediaOutAtMs === undefined && text.startsWith('{"event":"media"')) this.firstMediaOutAtMs = performance.now();
  }

  /**
   * A TTS chunk becomes several frames (and marks) in one go: without this each is its own write
   * syscall. The TCP socket is corked at the first send of a tick and uncorked on the next tick, so
   * they leave in one write. ws keeps the socket in `_socket` (no public accessor); without it,
   * sends simply go out one by one.
   */
  private coalesceWritesThisTick(): void {
    if (this.writesCorked) return;
    const tcp = (this.socket as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
    if (typeof tcp?.cork !== 'function') return;
    this.writesCorked = true;
    tcp.cork();
    process.nextTick(() => {
      this.writesCorked = false;
      tcp.uncork();
    });
  }

  /** First caller frame in -> first agent frame out, as the server saw it (null if either is missing). */
  private firstResponseMs(timing: StreamTiming): number | null {
    if (timing.firstCallerAudioAtMs === undefined || this.firstMediaOutAtMs === undefined) return null;
    return Math.round((this.firstMediaOutAtMs - timing.firstCallerAudioAtMs) * 10) / 10;
  }
}
