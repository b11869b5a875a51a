import type { LiveCallLabels } from '../metrics/live-call-labels';
import type { WebSocket, RawData } from 'ws';
import type { AgentCallContext, AgentEngine, AgentSession, CallControl, ConversationRecorder, ResumedCall } from '@switchboard/conversation';
import { AgentConfigError, TELEPHONY_SAMPLE_RATE, TelephonyAudioInput, TelephonyAudioOutput } from '@switchboard/conversation';
import type { MeasuredAiUsage, MeasuredCallUsage } from '@switchboard/billing';
import type { StreamAccount, StreamCallContext, StreamClaim } from '@switchboard/persistence';
import {
  hashStreamToken,
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
import type { CallEventBuffer } from './call-event-buffer';
import { agentCallContextOf } from './agent-call-context';
import { agentEndReason, type CallEndReason, type ConnectionCallEnd } from './call-end-reason';
import { closeCallRecords, suspendCallRecords } from './close-call-records';
import { carriedAudioOf, streamClosedPayload } from './stream-closed';
import { HandOffSlot, type StreamHandOff } from './stream-hand-off';
import { HeldCallerInput } from './held-caller-input';
import type { LiveCallRecording } from '../recordings/live-call-recording';
import type { RecordingStart } from '../recordings/call-recording.service';

export type { CallEndReason, ConnectionCallEnd } from './call-end-reason';

/** Close codes: 1000 normal end, 1008 policy violation (bad token), 1011 server-side failure. */
const CLOSE_NORMAL = 1000;
const CLOSE_POLICY = 1008;
const CLOSE_SERVER_ERROR = 1011;

/**
 * Audio and key presses that arrive while the token is being checked are held, not dropped: up to
 * 10 s of 20 ms frames. A claim slower than that ends the call with `protocol_error` (and an event
 * saying why) rather than let the agent start without what the caller said.
 */
const MAX_INPUT_HELD_BEFORE_AUTH = 500;
/** Call events (dtmf, marks, protocol errors) seen before the token check finishes are held up to this count. */
const MAX_EVENTS_HELD_BEFORE_AUTH = 500;
/** Protocol errors are recorded on the call up to this count, then only counted (a hostile peer can't flood the log table). */
const MAX_RECORDED_PROTOCOL_ERRORS = 20;

/** Why an agent refused to start, for the call's event log (a config error lists its problems). */
function configFailure(error: unknown): Record<string, unknown> {
  if (error instanceof AgentConfigError) return { message: error.message, problems: error.problems };
  return { message: error instanceof Error ? error.message : String(error) };
}

/** What a connection needs from the server; provided by MediaStreamService. */
export interface MediaStreamDependencies {
  /** Spends the stream token, if the call belongs to the account that signed the socket (one atomic statement). */
  claimStream(input: { callId: string; tokenHash: string; streamSid: string; now: Date; account: StreamAccount }): Promise<StreamClaim>;
  /** Stores the call's end, retrying while the database is unavailable; resolves once stored (never rejects). */
  finaliseCall(callId: string, end: ConnectionCallEnd): Promise<void>;
  resolveAgent(engine: string): AgentEngine | undefined;
  createEventBuffer(callId: string): CallEventBuffer;
  /** Where the agent's transcript, tool calls and latency go; flushed before the call is finalised. */
  createRecorder(callId: string, events: CallEventBuffer): ConversationRecorder;
  /** Hang-up and transfers for this call, through the Twilio account it belongs to. */
  createCallControl(call: Pick<StreamCallContext, 'callId' | 'twilioCallSid' | 'twilioAccountSid'>): CallControl;
  /** The conversation so far, for a stream that takes the call back after warm transfer `transferId` failed. */
  resumedCall?(callId: string, transferId: string): Promise<ResumedCall | undefined>;
  /** What an earlier stream of this call measured before a warm transfer held it (this process only). */
  takeCarriedUsage?(callId: string): MeasuredCallUsage | undefined;
  /** Starts the call's recording when its agent config asks for one (undefined: not recorded). */
  startRecording?(start: RecordingStart): LiveCallRecording | undefined;
  /** The call's AI usage meter (STT, TTS, LLM, realtime tokens, inference time), opened at start, read at the end. */
  usage: { open(callId: string): unknown; close(callId: string): MeasuredAiUsage };
  logger: PinoLogger;
  onClosed(connection: MediaStreamConnection): void;
  /** Frames and key presses held while the token is checked (default MAX_INPUT_HELD_BEFORE_AUTH); tests lower it. */
  maxInputHeldBeforeAuth?: number;
}

type ConnectionState = 'awaiting_start' | 'authorising' | 'active' | 'ended';

/** A live phone call, as Twilio's REST API names it. */
export interface PhoneCallRef {
  callSid: string;
  accountSid: string;
}

/**
 * One Twilio media WebSocket: protocol session <-> call record <-> agent. Owns the per-call audio
 * chains. Every failure path ends in `end()`, which finalises the call record exactly once.
 */
export class MediaStreamConnection implements MediaStreamHandler {
  readonly session: MediaStreamSession;
  private state: ConnectionState = 'awaiting_start';
  private callId: string | undefined;
  private events: CallEventBuffer | undefined;
  private recorder: ConversationRecorder | undefined;
  private agent: AgentSession | undefined;
  private agentContext: AgentCallContext | undefined;
  private input: TelephonyAudioInput | undefined;
  private recording: LiveCallRecording | undefined;
  /** What the caller sends while the token is checked, in order, for the agent once it exists. */
  private readonly held: HeldCallerInput;
  private recordedProtocolErrors = 0;
  private marksCleared = 0;
  private writesCorked = false;
  /** Events that happen before the token check finishes; recorded once the call is known. */
  private eventsBeforeAuth: { type: string; payload: Record<string, unknown>; at: Date }[] = [];
  private readonly openedAt = Date.now();
  private endedWhileAuthorising: CallEndReason | undefined;
  /** The call id a `start` names, while its token is being checked. */
  private claimingCallId: string | undefined;
  /** An answering-machine verdict that arrived while the token was checked (the claim may have read the call before it was stored). */
  private pendingAnsweredBy: string | undefined;
  /** A warm transfer taking the call: the stream's end then suspends the call rather than end it. */
  private readonly handOff = new HandOffSlot();
  /** The call's metrics labels while its agent runs (GET /metrics: live calls by direction and engine). */
  liveCallLabels: LiveCallLabels | undefined;
  /** The phone call this stream carries (a Twilio socket claims only phone calls), for the drain's message. */
  private phoneCall: PhoneCallRef | undefined;
  /** Set once the drain asked Twilio to end the call with its message: the stream's stop then ends it for that reason. */
  private stopMeans: CallEndReason = 'stream_stopped';
  /** Monotonic times of the first caller frame received and the first agent frame sent. */
  private firstMediaInAtMs: number | undefined;
  private firstMediaOutAtMs: number | undefined;

  constructor(
    private readonly socket: WebSocket,
    private readonly deps: MediaStreamDependencies,
    /** The Twilio account whose signature opened this socket: only that account's calls may stream on it. */
    private readonly account: StreamAccount = { kind: 'operator' },
  ) {
    this.held = new HeldCallerInput(deps.maxInputHeldBeforeAuth ?? MAX_INPUT_HELD_BEFORE_AUTH);
    this.session = new MediaStreamSession(this, { send: (text) => this.send(text) });
    socket.on('message', (data, isBinary) => this.onSocketMessage(data, isBinary));
    socket.on('close', () => void this.end('connection_lost'));
    socket.on('error', (error) => this.deps.logger.warn({ callId: this.callId, err: error }, 'media socket error'));
  }

  /** The call this connection carries, once its stream token was accepted. */
  get activeCallId(): string | undefined {
    return this.callId;
  }

  /** The call this connection carries, or the one its `start` names while the token is checked. */
  get claimedOrClaimingCallId(): string | undefined {
    return this.callId ?? this.claimingCallId;
  }

  /**
   * Answering-machine detection decided after the stream started: the agent reads the verdict from
   * its context and is told (a voicemail may be due). A verdict that arrives while the token is
   * checked is kept for the agent about to start: the claim may have read the call just before the
   * verdict was stored, and asynchronous detection can decide that early.
   */
  noteAnsweredBy(answeredBy: string): void {
    if (!this.agentContext) {
      if (this.state === 'authorising') this.pendingAnsweredBy = answeredBy;
      return;
    }
    this.agentContext.answeredBy = answeredBy;
    this.agent?.onAnsweredBy?.(answeredBy);
  }

  /**
   * A warm transfer is about to put the caller on hold (see StreamHandOff). Throws when the stream
   * has ended or already hands off.
   */
  beginHandOff(): StreamHandOff {
    if (this.state !== 'active') throw new Error('the media stream is not active');
    return this.handOff.begin();
  }

  /** Ends the call from the server side (shutdown). */
  async shutdown(): Promise<void> {
    await this.end('server_shutdown');
  }

  /**
   * The drain's bound passed with this call live: `sayAndHangUp` asks Twilio to speak `message` and
   * hang up, Twilio stops the stream, and the call ends as 'drain_timeout'. Where Twilio cannot be
   * asked (no credentials, a refusal, no phone call yet), the call ends from here at once.
   */
  async endWithMessage(message: string, sayAndHangUp: (call: PhoneCallRef, message: string) => Promise<boolean>): Promise<void> {
    if (this.state !== 'active' || !this.phoneCall) return this.end(this.callId === undefined ? 'server_shutdown' : 'drain_timeout');
    this.record('drain_message', { message });
    this.stopMeans = 'drain_timeout';
    let asked = false;
    try {
      asked = await sayAndHangUp(this.phoneCall, message);
    } catch (error) {
      this.deps.logger.warn({ callId: this.callId, err: error }, 'Twilio could not be asked to end the call with the drain message; ending it here');
    }
    if (!asked) await this.end('drain_timeout');
  }

  onStart(event: StreamStartedEvent): void {
    this.state = 'authorising';
    void this.authorise(event).catch((error: unknown) => {
      this.deps.logger.error({ err: error, callSid: event.callSid }, 'media stream could not be started');
      void this.end('agent_error', CLOSE_SERVER_ERROR);
    });
  }

  onMedia(event: MediaFrameEvent): void {
    this.firstMediaInAtMs ??= performance.now();
    if (this.state === 'active' && this.agent && this.input) {
      this.recording?.callerMulaw(event.payload);
      this.input.deliver(event.payload, this.agent);
    } else if (this.state === 'authorising' && !this.held.holdFrame(event.payload)) {
      this.endForHeldInputLimit();
    }
  }

  onDtmf(event: DtmfEvent): void {
    this.record('dtmf', { digit: event.digit });
    if (this.agent) this.agent.onDtmf(event.digit);
    // Keys pressed while the token is checked reach the agent once it exists, in order with the held audio.
    else if (this.state === 'authorising' && !this.held.holdDigit(event.digit)) this.endForHeldInputLimit();
  }

  onMark(event: MarkEchoEvent): void {
    // Marks come back several times a second per call: they are counted (stream_closed reports
    // how many, how many a clear discarded, and how much audio was heard), not stored one row each.
    if (event.wasCleared) this.marksCleared += 1;
    this.agent?.onMarkEchoed(event.name, event.wasCleared);
  }

  onStop(event: StreamStoppedEvent): void {
    this.record('stream_stopped', { callSid: event.callSid ?? null });
    void this.end(this.stopMeans, CLOSE_NORMAL);
  }

  onProtocolError(event: ProtocolErrorEvent): void {
    this.deps.logger.warn({ callId: this.callId, code: event.code, excerpt: event.rawExcerpt }, `media protocol error: ${event.message}`);
    if (this.recordedProtocolErrors < MAX_RECORDED_PROTOCOL_ERRORS) {
      this.recordedProtocolErrors += 1;
      this.record('protocol_error', { code: event.code, message: event.message, fatal: event.fatal });
    }
    if (event.fatal) void this.end('protocol_error', CLOSE_POLICY);
  }

  private onSocketMessage(data: RawData, isBinary: boolean): void {
    if (isBinary) {
      this.onProtocolError({ code: 'invalid_json', message: 'binary frame received; Twilio sends JSON text', rawExcerpt: '', fatal: false });
      return;
    }
    // ws delivers text frames as one Buffer with the default binaryType ('nodebuffer').
    this.session.receive((data as Buffer).toString('utf8'));
  }

  private async authorise(start: StreamStartedEvent): Promise<void> {
    const callId = start.customParameters[STREAM_PARAM_CALL_ID];
    const token = start.customParameters[STREAM_PARAM_TOKEN];
    if (!callId || !token) return this.refuse(start, 'missing', callId);
    this.claimingCallId = callId;
    const claim = await this.deps.claimStream({
      callId,
      tokenHash: hashStreamToken(token),
      streamSid: start.streamSid,
      now: new Date(),
      account: this.account,
    });
    if (claim.outcome !== 'ok') return this.refuse(start, claim.outcome, callId);
    const call = claim.context;
    if (this.state !== 'authorising') {
      // The stream ended while the token was checked. The call is ours now, so it is finalised
      // here (end() could not, as it did not know the call yet), with what happened before the end.
      if (this.endedWhileAuthorising) {
        const events = this.deps.createEventBuffer(callId);
        for (const early of this.eventsBeforeAuth) events.add(early.type, early.payload, early.at);
        this.eventsBeforeAuth = [];
        await events.close();
        await this.deps.finaliseCall(callId, { endReason: this.endedWhileAuthorising, endedAt: new Date() });
      }
      return;
    }

    this.callId = callId;
    this.events = this.deps.createEventBuffer(callId);
    this.events.add('stream_started', { streamSid: start.streamSid, tracks: start.tracks, mediaFormat: start.mediaFormat });
    for (const early of this.eventsBeforeAuth) this.events.add(early.type, early.payload, early.at);
    this.eventsBeforeAuth = [];

    const engine = this.deps.resolveAgent(call.agentEngine);
    if (!engine) {
      this.deps.logger.error({ callId, engine: call.agentEngine }, 'no agent engine of this type is available');
      this.events.add('error', { code: 'agent_unavailable', engine: call.agentEngine });
      return this.end('agent_error', CLOSE_SERVER_ERROR);
    }
    const { [STREAM_PARAM_TOKEN]: _secret, [STREAM_PARAM_RESUME_TRANSFER]: resumeTransfer, ...customParameters } = start.customParameters;
    // Only with the call's valid token: our own TwiML set it, when a warm transfer brought the call back.
    const resumed = resumeTransfer === undefined ? undefined : await this.deps.resumedCall?.(callId, resumeTransfer);
    // The stream ended during that read: end() has finalised the call already (it knew the call).
    if (this.state !== 'authorising') return;
    this.recorder = this.deps.createRecorder(callId, this.events);
    this.deps.usage.open(callId);
    const context = agentCallContextOf(call, {
      customParameters,
      answeredBy: this.pendingAnsweredBy,
      resumed,
      recorder: this.recorder,
      callControl: this.deps.createCallControl(call),
      // Deferred: the agent calls this from inside its own handlers.
      endCall: (reason) => setImmediate(() => void this.end(agentEndReason(reason), CLOSE_NORMAL)),
    });
    this.agentContext = context;
    if (call.twilioCallSid !== null && call.twilioAccountSid !== null) this.phoneCall = { callSid: call.twilioCallSid, accountSid: call.twilioAccountSid };
    try {
      const audio = engine.describeAudio?.(context) ?? engine.audio;
      // An agent that declares mu-law gets (and gives) Twilio's bytes untouched in that direction.
      const output = new TelephonyAudioOutput(audio.outputSampleRate, this.session, audio.outputEncoding);
      this.agent = engine.createSession(context, output);
      this.input = new TelephonyAudioInput(audio.inputSampleRate, audio.inputEncoding);
      this.input.checkAgent(this.agent);
    } catch (error) {
      // A stored config the runtime refuses (written before a rule existed, or straight into the
      // database): the call record says why, in the tenant's terms, and the call ends at once.
      this.events.add('error', { code: 'agent_config_refused', engine: engine.name, ...configFailure(error) });
      this.deps.logger.warn({ callId, err: error }, 'agent could not start: its config was refused');
      return this.end('agent_error', CLOSE_SERVER_ERROR);
    }
    this.state = 'active';
    this.liveCallLabels = { direction: call.direction, engine: engine.name };
    this.deps.logger.info({ callId, streamSid: start.streamSid, engine: engine.name }, 'media stream started');
    // A call taken back after a warm transfer was recorded up to the hold; its recording is not reopened.
    if (resumed === undefined) this.startRecording(call);
    const { agent, input, recording } = this;
    this.held.replay({
      frame: (mulaw) => {
        recording?.callerMulaw(mulaw);
        input.deliver(mulaw, agent);
      },
      digit: (digit) => agent.onDtmf(digit),
    });
  }

  /** The recording (when the agent's config asks for one) hears the caller from their first frame, and the agent as sent. */
  private startRecording(call: StreamCallContext): void {
    if (!this.callId) return;
    const recording = this.deps.startRecording?.({
      callId: this.callId,
      organizationId: call.organizationId,
      agentConfig: call.agentConfig,
      callStartedAt: call.startedAt,
      sampleRate: TELEPHONY_SAMPLE_RATE,
      originMs: this.firstMediaInAtMs ?? performance.now(),
    });
    if (!recording) return;
    this.recording = recording;
    this.session.observeOutbound({ frameSent: (frame) => recording.agentMulawSent(frame), cleared: () => recording.agentCleared() });
  }

  /**
   * The token check has taken longer than the caller's held audio may grow: rather than drop what
   * the caller says (the agent would answer half a sentence), the call ends with a protocol error
   * that says so. Recorded on the call once the claim settles (see authorise).
   */
  private endForHeldInputLimit(): void {
    const message =
      `the stream token was still being checked after ${this.held.frames} frames (${this.held.size} frames and key presses held); ` +
      'the call was ended rather than drop caller audio';
    this.deps.logger.warn({ callSid: this.session.callSid, held: this.held.size }, `media stream ended: ${message}`);
    this.record('protocol_error', { code: 'held_input_limit', message, fatal: true });
    this.held.discard();
    void this.end('protocol_error', CLOSE_SERVER_ERROR);
  }

  /** Records a call event; before the call is authorised it is held (bounded) rather than lost. */
  private record(type: string, payload: Record<string, unknown>): void {
    if (this.events) this.events.add(type, payload);
    else if (this.state === 'authorising' && this.eventsBeforeAuth.length < MAX_EVENTS_HELD_BEFORE_AUTH) {
      this.eventsBeforeAuth.push({ type, payload, at: new Date() });
    }
  }

  private refuse(start: StreamStartedEvent, verdict: string, callId: string | undefined): void {
    // A bad token must not touch the call it names: that call may be live on another socket.
    this.deps.logger.warn({ callSid: start.callSid, callId, verdict }, 'media stream refused: stream token rejected');
    void this.end(undefined, CLOSE_POLICY);
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
  private firstResponseMs(): number | null {
    if (this.firstMediaInAtMs === undefined || this.firstMediaOutAtMs === undefined) return null;
    return Math.round((this.firstMediaOutAtMs - this.firstMediaInAtMs) * 10) / 10;
  }

  /**
   * Finalises the call (when this socket owned one) and closes the socket. Idempotent: the first
   * reason wins, later calls (e.g. the close event after a stop) are no-ops.
   */
  private async end(reason: CallEndReason | undefined, closeCode = CLOSE_NORMAL): Promise<void> {
    if (this.state === 'ended') return;
    this.liveCallLabels = undefined;
    const owned = this.state === 'active' || this.callId !== undefined;
    if (this.state === 'authorising') this.endedWhileAuthorising = reason;
    this.state = 'ended';
    this.agent?.close(reason ?? 'refused');
    this.session.markTransportClosed();
    // What was still queued for the caller's ear now never plays; the file is stored in the background.
    this.recording?.finish();
    if (this.socket.readyState === this.socket.OPEN || this.socket.readyState === this.socket.CONNECTING) {
      this.socket.close(closeCode);
    }
    try {
      if (owned && this.callId && reason) {
        const counters = this.session.counters;
        const handingOff = this.handOff.handingOff;
        const stream = { openedAt: this.openedAt, firstResponseMs: this.firstResponseMs(), marksCleared: this.marksCleared };
        this.events?.add('stream_closed', streamClosedPayload(handingOff ? 'transfer_hold' : reason, counters, stream));
        const audio = carriedAudioOf(counters);
        const records = { callId: this.callId, openedAt: this.openedAt, recorder: this.recorder, events: this.events, usage: this.deps.usage, audio };
        if (handingOff) {
          // The caller is on hold, not gone: the transfer ends the call (or a new stream resumes it).
          this.handOff.suspend(await suspendCallRecords(records));
          this.deps.logger.info({ callId: this.callId, reason }, 'media stream ended: the call is held for a warm transfer');
          return;
        }
        this.handOff.close();
        const carried = this.deps.takeCarriedUsage?.(this.callId);
        await closeCallRecords({ ...records, reason, carried, finaliseCall: (callId, end) => this.deps.finaliseCall(callId, end) });
        this.deps.logger.info({ callId: this.callId, reason }, 'media stream ended');
      }
    } catch (error) {
      this.deps.logger.error({ callId: this.callId, err: error }, 'call record could not be finalised');
    } finally {
      this.deps.onClosed(this);
    }
  }
}
