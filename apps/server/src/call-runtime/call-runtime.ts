import { type AgentCallContext, type AgentSession, type ConversationRecorder } from '@switchboard/conversation';
import { AgentConfigError } from '@switchboard/agent-config';
import type { StreamCallContext } from '@switchboard/persistence';
import { hashStreamToken } from '@switchboard/telephony';
import type { LiveCallLabels } from '../metrics/live-call-labels';
import type { LiveCallRecording } from '../recordings/live-call-recording';
import { agentCallContextOf } from './agent-call-context';
import { agentEndReason, type CallEndReason } from './call-end-reason';
import type { CallRuntimeDependencies } from './call-runtime-dependencies';
import type { CallerAudioPath, CallInbound, CallStartRequest, CallTransport } from './call-transport';
import { closeCallRecords, suspendCallRecords } from './close-call-records';
import { HeldCallerInput } from './held-caller-input';
import type { CallEventBuffer } from './records/call-event-buffer';
import { HandOffSlot, type StreamHandOff } from './stream-hand-off';

export type { CallRuntimeDependencies } from './call-runtime-dependencies';

/**
 * Audio and key presses that arrive while the token is being checked are held, not dropped: up to
 * 10 s of 20 ms frames, on every carrier. A claim slower than that ends the call with
 * `protocol_error` (and an event saying why) rather than let the agent start without what the
 * caller said.
 */
export const MAX_INPUT_HELD_BEFORE_AUTH = 500;
/** Call events (dtmf, protocol errors) seen before the token check finishes are held up to this count. */
const MAX_EVENTS_HELD_BEFORE_AUTH = 500;

/** Why an agent refused to start, for the call's event log (a config error lists its problems). */
function configFailure(error: unknown): Record<string, unknown> {
  if (error instanceof AgentConfigError) return { message: error.message, problems: error.problems };
  return { message: error instanceof Error ? error.message : String(error) };
}

type CallState = 'awaiting_start' | 'authorising' | 'active' | 'ended';

/** A live phone call, as Twilio's REST API names it. */
export interface PhoneCallRef {
  callSid: string;
  accountSid: string;
}

/**
 * One call's life on this server, from its carrier's `start` to its last record, whatever carries
 * it: the token claim with the caller's input held meanwhile, the agent and its audio both ways,
 * marks and barge-in, the recording, the usage meter, the drain's message, a warm transfer's
 * hand-off, and the end. Every way out goes through `end()`, which finalises the call exactly once.
 */
export class CallRuntime implements CallInbound {
  private state: CallState = 'awaiting_start';
  private callId: string | undefined;
  private events: CallEventBuffer | undefined;
  private recorder: ConversationRecorder | undefined;
  private agent: AgentSession | undefined;
  private agentContext: AgentCallContext | undefined;
  private caller: CallerAudioPath | undefined;
  private recording: LiveCallRecording | undefined;
  /** What the caller sends while the token is checked, in order, for the agent once it exists. */
  private readonly held: HeldCallerInput;
  /** Events that happen before the token check finishes; recorded once the call is known. */
  private eventsBeforeAuth: { type: string; payload: Record<string, unknown>; at: Date }[] = [];
  private readonly openedAt = Date.now();
  private firstCallerAudioAtMs: number | undefined;
  private endedWhileAuthorising: CallEndReason | undefined;
  /** The call id a `start` names, while its token is being checked. */
  private claimingCallId: string | undefined;
  /** An answering-machine verdict that arrived while the token was checked (the claim may have read the call before it was stored). */
  private pendingAnsweredBy: string | undefined;
  /** A warm transfer taking the call: the stream's end then suspends the call rather than end it. */
  private readonly handOff = new HandOffSlot();
  /** The call's metrics labels while its agent runs (GET /metrics: live calls by direction and engine). */
  liveCallLabels: LiveCallLabels | undefined;
  /** The phone call this stream carries (none for a web call), for the drain's message. */
  private phoneCall: PhoneCallRef | undefined;
  /** Set once the drain asked Twilio to end the call with its message: the stream's stop then ends it for that reason. */
  private stopMeans: CallEndReason = 'stream_stopped';
  /** What the drain's bound tells a peer whose protocol carries it with the end (the browser). */
  private endMessage: string | undefined;
  /** The first end(), while and after it runs. */
  private ending: Promise<void> | undefined;

  constructor(
    readonly transport: CallTransport,
    private readonly deps: CallRuntimeDependencies,
  ) {
    this.held = new HeldCallerInput(deps.maxInputHeldBeforeAuth ?? MAX_INPUT_HELD_BEFORE_AUTH);
    transport.connect(this);
  }

  /** The call this runtime carries, once its stream token was accepted. */
  get activeCallId(): string | undefined {
    return this.callId;
  }

  /** The call this runtime carries, or the one its `start` names while the token is checked. */
  get claimedOrClaimingCallId(): string | undefined {
    return this.callId ?? this.claimingCallId;
  }

  /** The carrier's id of the phone call this runtime carries (none for a web call). */
  get phoneCallSid(): string | undefined {
    return this.phoneCall?.callSid;
  }

  /**
   * The carrier says the call is over (Twilio's terminal status callback came before its stream's
   * stop): the call ends now, for the reason the stop would have given.
   */
  carrierEnded(): void {
    void this.end(this.stopMeans, this.transport.closeCodes.normal);
  }

  /**
   * Answering-machine detection decided after the stream started: the agent reads the verdict from
   * its context and is told (a voicemail may be due). A verdict that arrives while the token is
   * checked is kept for the agent about to start.
   */
  noteAnsweredBy(answeredBy: string): void {
    if (!this.agentContext) {
      if (this.state === 'authorising') this.pendingAnsweredBy = answeredBy;
      return;
    }
    this.agentContext.answeredBy = answeredBy;
    this.agent?.onAnsweredBy?.(answeredBy);
  }

  /** A warm transfer is about to put the caller on hold (see StreamHandOff). Throws when the call has ended or already hands off. */
  beginHandOff(): StreamHandOff {
    if (this.state !== 'active') throw new Error('the media stream is not active');
    return this.handOff.begin();
  }

  /** Ends the call from the server side (shutdown). */
  async shutdown(): Promise<void> {
    await this.end('server_shutdown');
  }

  /**
   * The drain's bound passed with this call live. A phone call: `sayAndHangUp` asks Twilio to speak
   * `message` and hang up, Twilio stops the stream, and the call ends as 'drain_timeout' (where
   * Twilio cannot be asked, it ends from here at once). Any other call ends at once, its peer told
   * the message with the end.
   */
  async endWithMessage(message: string, sayAndHangUp: (call: PhoneCallRef, message: string) => Promise<boolean>): Promise<void> {
    const endReason = this.callId === undefined ? 'server_shutdown' : 'drain_timeout';
    if (this.state !== 'active' || !this.phoneCall) {
      this.endMessage = message;
      this.events?.add('drain_message', { message });
      return this.end(endReason);
    }
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

  start(request: CallStartRequest): void {
    if (this.state !== 'awaiting_start') return;
    this.state = 'authorising';
    void this.authorise(request).catch((error: unknown) => {
      this.deps.logger.error({ err: error, callSid: request.carrierCallId }, `${this.transport.name} could not be started`);
      void this.end('agent_error', this.transport.closeCodes.serverError);
    });
  }

  callerAudio(frame: Uint8Array): void {
    this.firstCallerAudioAtMs ??= performance.now();
    if (this.caller !== undefined) this.caller.deliver(frame);
    else if (this.state !== 'ended' && this.state !== 'active' && !this.held.holdFrame(frame)) this.endForHeldInputLimit();
  }

  keyPressed(digit: string): void {
    this.record('dtmf', { digit });
    if (this.agent) this.agent.onDtmf(digit);
    // Keys pressed while the token is checked reach the agent once it exists, in order with the held audio.
    else if (this.state !== 'ended' && this.state !== 'active' && !this.held.holdDigit(digit)) this.endForHeldInputLimit();
  }

  markEchoed(name: string, wasCleared: boolean): void {
    this.agent?.onMarkEchoed(name, wasCleared);
  }

  hungUp(payload: Record<string, unknown>): void {
    this.record('stream_stopped', payload);
    void this.end(this.stopMeans, this.transport.closeCodes.normal);
  }

  connectionLost(): void {
    void this.end('connection_lost');
  }

  /** Records a call event; before the call is authorised it is held (bounded) rather than lost. */
  record(type: string, payload: Record<string, unknown>): void {
    if (this.events) this.events.add(type, payload);
    else if (this.state === 'authorising' && this.eventsBeforeAuth.length < MAX_EVENTS_HELD_BEFORE_AUTH) {
      this.eventsBeforeAuth.push({ type, payload, at: new Date() });
    }
  }

  private async authorise(start: CallStartRequest): Promise<void> {
    const { callId, token } = start;
    if (!callId || !token) return this.refuse(start, 'missing', callId);
    this.claimingCallId = callId;
    const claim = await this.deps.claimStream({ callId, tokenHash: hashStreamToken(token), streamSid: start.streamSid, now: new Date(), account: start.account });
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
    this.events.add('stream_started', start.streamStarted);
    for (const early of this.eventsBeforeAuth) this.events.add(early.type, early.payload, early.at);
    this.eventsBeforeAuth = [];

    const engine = this.deps.resolveAgent(call.agentEngine);
    if (!engine) {
      this.deps.logger.error({ callId, engine: call.agentEngine }, 'no agent engine of this type is available');
      this.events.add('error', { code: 'agent_unavailable', engine: call.agentEngine });
      return this.end('agent_error', this.transport.closeCodes.serverError);
    }
    // Only with the call's valid token: our own TwiML set it, when a warm transfer brought the call back.
    const resumed = start.resumeTransfer === undefined ? undefined : await this.deps.resumedCall?.(callId, start.resumeTransfer);
    // The stream ended during that read: end() has finalised the call already (it knew the call).
    if (this.state !== 'authorising') return;
    this.recorder = this.deps.createRecorder(callId, this.events);
    this.deps.usage.open(callId);
    const context = agentCallContextOf(call, {
      customParameters: start.customParameters,
      answeredBy: this.pendingAnsweredBy,
      resumed,
      recorder: this.recorder,
      callControl: this.deps.createCallControl(call, this),
      // Deferred: the agent calls this from inside its own handlers.
      endCall: (reason) => setImmediate(() => void this.end(agentEndReason(reason), this.transport.closeCodes.normal)),
    });
    this.agentContext = context;
    if (call.twilioCallSid !== null && call.twilioAccountSid !== null) this.phoneCall = { callSid: call.twilioCallSid, accountSid: call.twilioAccountSid };
    let agent: AgentSession;
    let caller: CallerAudioPath;
    try {
      const audio = engine.describeAudio?.(context) ?? engine.audio;
      agent = engine.createSession(context, this.transport.agentOutput(audio));
      this.agent = agent;
      caller = this.transport.callerInput(audio, agent);
    } catch (error) {
      // A stored config the runtime refuses (written before a rule existed, or straight into the
      // database): the call record says why, in the tenant's terms, and the call ends at once.
      this.events.add('error', { code: 'agent_config_refused', engine: engine.name, ...configFailure(error) });
      this.deps.logger.warn({ callId, err: error }, `${this.transport.name} agent could not start: its config was refused`);
      return this.end('agent_error', this.transport.closeCodes.serverError);
    }
    this.state = 'active';
    this.liveCallLabels = { direction: call.direction, engine: engine.name };
    this.transport.started(callId);
    this.deps.logger.info({ callId, streamSid: start.streamSid, engine: engine.name }, `${this.transport.name} started`);
    // A call taken back after a warm transfer was recorded up to the hold; its recording is not reopened.
    if (resumed === undefined) this.startRecording(call, caller);
    this.held.replay({ frame: (frame) => caller.deliver(frame), digit: (digit) => agent.onDtmf(digit) });
    this.caller = caller;
  }

  /** The recording (when the agent's config asks for one) hears the caller from their first frame, and the agent as sent. */
  private startRecording(call: StreamCallContext, caller: CallerAudioPath): void {
    const recording = this.deps.startRecording?.({
      callId: call.callId,
      organizationId: call.organizationId,
      agentConfig: call.agentConfig,
      callStartedAt: call.startedAt,
      sampleRate: this.transport.recordingSampleRate,
      originMs: this.firstCallerAudioAtMs ?? performance.now(),
    });
    if (!recording) return;
    this.recording = recording;
    caller.record(recording);
    this.transport.recordOutbound(recording);
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
    this.deps.logger.warn({ callId: this.claimedOrClaimingCallId, held: this.held.size }, `${this.transport.name} ended: ${message}`);
    this.record('protocol_error', { code: 'held_input_limit', message, fatal: true });
    this.transport.tellError?.('held_input_limit', message);
    this.held.discard();
    void this.end('protocol_error', this.transport.closeCodes.heldInputLimit);
  }

  private refuse(start: CallStartRequest, verdict: string, callId: string | undefined): void {
    // A bad token must not touch the call it names: that call may be live on another socket.
    this.deps.logger.warn({ callSid: start.carrierCallId, callId, verdict }, `${this.transport.name} refused: stream token rejected`);
    this.transport.refused();
    void this.end(undefined, this.transport.closeCodes.refused);
  }

  /**
   * Finalises the call (when this runtime owned one) and closes the transport. Idempotent: the
   * first reason wins; later calls (the close event after a stop, a racing drain, the shutdown)
   * change nothing but wait for the first to finish, so the shutdown waits for ends still storing
   * their records rather than close the database under them.
   */
  end(reason: CallEndReason | undefined, closeCode = this.transport.closeCodes.normal): Promise<void> {
    this.ending ??= this.endOnce(reason, closeCode);
    return this.ending;
  }

  private async endOnce(reason: CallEndReason | undefined, closeCode: number): Promise<void> {
    this.liveCallLabels = undefined;
    if (this.state === 'authorising') this.endedWhileAuthorising = reason;
    this.state = 'ended';
    this.caller = undefined;
    this.held.discard();
    this.agent?.close(reason ?? 'refused');
    // Nothing the closing agent still says goes out (nor into the recording).
    this.transport.close(reason, closeCode, this.endMessage);
    // What was still queued for the caller's ear now never plays; the file is stored in the background.
    this.recording?.finish();
    try {
      if (this.callId && reason) {
        const callId = this.callId;
        const handingOff = this.handOff.handingOff;
        const timing = { openedAt: this.openedAt, firstCallerAudioAtMs: this.firstCallerAudioAtMs };
        this.events?.add('stream_closed', this.transport.streamClosedPayload(handingOff ? 'transfer_hold' : reason, timing));
        const records = { callId, openedAt: this.openedAt, recorder: this.recorder, events: this.events, usage: this.deps.usage, audio: this.transport.carriedAudio() };
        if (handingOff) {
          // The caller is on hold, not gone: the transfer ends the call (or a new stream resumes it).
          this.handOff.suspend(await suspendCallRecords(records));
          this.deps.logger.info({ callId, reason }, `${this.transport.name} ended: the call is held for a warm transfer`);
          return;
        }
        this.handOff.close();
        const carried = this.deps.takeCarriedUsage?.(callId);
        await closeCallRecords({ ...records, reason, carried, finaliseCall: (id, end) => this.deps.finaliseCall(id, end) });
        this.deps.logger.info({ callId, reason }, `${this.transport.name} ended`);
      }
    } catch (error) {
      this.deps.logger.error({ callId: this.callId, err: error }, 'call record could not be finalised');
    } finally {
      // In the turn the hand-off settles: a transfer resuming on `suspended` finds the call no longer live here.
      this.deps.onClosed(this);
    }
  }
}
