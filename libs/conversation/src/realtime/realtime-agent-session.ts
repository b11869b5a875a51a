import { decodeMulaw } from '@switchboard/audio';
import type {
  SpeechActivityEvent,
  SpeechToSpeechEngine,
  SpeechToSpeechResponseDoneEvent,
  SpeechToSpeechSession,
  SpeechToSpeechTranscriptEvent,
  VadStream,
} from '@switchboard/inference';
import { AgentCore } from '../agent/agent-core';
import type { AgentAudioOutput, AgentCallContext } from '../agent/agent-session';
import { describeDtmfInput } from '../agent/dtmf-collector';
import { priorConversationNote } from '../agent/resumed-call';
import type { VoicemailPlayback } from '../agent/voicemail-drop';
import { CallClock } from '../call/call-clock';
import type { AgentConfig } from '@switchboard/agent-config';
import { renderPromptTemplate } from '@switchboard/agent-config';
import { isOpeningLine, type TranscriptSource } from '../records/conversation-records';
import { errorPayload } from '../records/event-payloads';
import type { ToolRunner } from '../tools/tool-contracts';
import { AgentSpeech } from './agent-speech';
import { connectModel } from './model-connection';
import { RealtimeInterruptions, type CallerInterruption } from './realtime-interruptions';
import { RealtimeToolActions } from './realtime-tool-actions';
import { RealtimeTranscript } from './realtime-transcript';
import { RequestedLines } from './requested-lines';
import { ResponseLedger } from './response-ledger';
import { RealtimeVoicemail } from './realtime-voicemail';
import { heardTextOf, waitForPlayback, type SpokenItem } from './spoken-item';

/** mu-law at 8 kHz: bytes of caller audio per millisecond. */
const MULAW_BYTES_PER_MS = 8;
/** The model's end-of-speech position is believed only if it lies this close behind the audio sent. */
const MAX_TRUSTED_VAD_LAG_MS = 10_000;

/** What a realtime session runs on, besides the call. */
export interface RealtimeSessionDeps {
  tools: ToolRunner;
  engine: Promise<SpeechToSpeechEngine>;
  /** The call's own VAD stream, which judges barge-in (created only when interruptions are on). */
  createVad(): Promise<VadStream>;
}

/**
 * One call of a `realtime` agent: caller audio goes to a speech-to-speech model as mu-law (what
 * a phone call sends: no resampling), the model's audio comes back the same way. The model detects turns
 * and answers them; this session adds what the platform promises on every engine: barge-in judged
 * by the platform's own VAD and by what the caller heard (marks), backchannels ignored, tools
 * (with a filler line when slow), keypad input, an apology when the model fails, transcripts,
 * latency records, idle and max duration.
 */
export class RealtimeAgentSession extends AgentCore<Uint8Array> {
  protected readonly slowStart = { code: 'realtime_connect_slow', notReady: 'the speech-to-speech model had not connected' };
  private readonly instructions: string;
  private readonly responses = new ResponseLedger();
  private readonly lines: RequestedLines;
  private readonly toolActions: RealtimeToolActions;
  private readonly transcript: RealtimeTranscript;
  private readonly speech: AgentSpeech;
  /** Undefined when interruptions are off for this agent. */
  private readonly interruptions: RealtimeInterruptions | undefined;
  private session: SpeechToSpeechSession | undefined;
  /** Caller audio decoded for the barge-in VAD only (reused: the VAD copies what it keeps). */
  private decodedForVad = new Int16Array(160);
  /** Caller audio sent to the model so far: the clock its VAD positions (audio_start/end_ms) run on. */
  private inputBytesSent = 0;
  private speechStartedAtMs: number | undefined;
  /** The model began saying the opening line (its audio reached the call). */
  private openingSpoken = false;
  private readonly voicemailSpeech: RealtimeVoicemail;

  constructor(context: AgentCallContext, config: AgentConfig, output: AgentAudioOutput, deps: RealtimeSessionDeps) {
    super(context, config, output);
    // A call taken back after a warm transfer: the new model session learns what was said before.
    this.instructions = renderPromptTemplate(this.config.systemPrompt, this.variables) + priorConversationNote(context.resumed?.priorTurns);
    this.transcript = new RealtimeTranscript(context.recorder, this.clock, context.resumed?.nextTranscriptIndex);
    this.lines = new RequestedLines(this.responses, {
      onTimeout: (line) => {
        if (line.then) this.context.recorder.event('closing_words_timeout', { source: line.source });
      },
      isOpen: () => !this.closed,
    });
    this.speech = new AgentSpeech({
      output,
      clock: this.clock,
      transcript: this.transcript,
      lines: this.lines,
      onPlayingChanged: (playing) => this.interruptions?.setArmed(playing),
      onItemStarted: (item) => {
        if (isOpeningLine(item.source)) this.openingSpoken = true;
        this.policy.pauseIdle();
        this.voicemailSpeech.itemStarted(item);
      },
      maxReplyMs: config.maxReplyMs,
      onReplyLimit: (item) => this.stopAtReplyLimit(item),
    });
    this.voicemailSpeech = new RealtimeVoicemail({
      stopConversation: () => this.stopForVoicemail(),
      say: (text, source, then, timeoutMs) => this.say(text, source, then, timeoutMs),
      isClosed: () => this.closed,
    });
    this.toolActions = new RealtimeToolActions({
      tools: deps.tools,
      context,
      clock: this.clock,
      policy: this.policy,
      responses: this.responses,
      lines: this.lines,
      session: () => this.session,
      isClosed: () => this.closed,
      say: (text, source, then) => this.say(text, source, then),
    });
    this.interruptions = config.interruptions.enabled
      ? new RealtimeInterruptions({
          createVad: () => deps.createVad(),
          threshold: config.turn.threshold,
          minSpeechMs: config.interruptions.minSpeechMs,
          clock: this.clock,
          recorder: context.recorder,
          onInterruption: (speech) => this.onCallerInterruption(speech),
        })
      : undefined;
    void this.connect(deps.engine, deps.tools);
  }

  /** The caller's mu-law, straight from the call: to the model untouched, decoded only for the barge-in VAD. */
  pushMulaw(mulaw: Uint8Array): void {
    // The model must not answer a recording machine.
    if (this.ignoresCaller) return;
    if (this.interruptions) {
      if (this.decodedForVad.length < mulaw.length) this.decodedForVad = new Int16Array(mulaw.length);
      this.interruptions.push(decodeMulaw(mulaw, this.decodedForVad.subarray(0, mulaw.length)));
    }
    // The engine encodes the view before sendAudio returns; held frames are copies (the edge reuses
    // `mulaw`), made with the constructor: a Buffer's slice() would be a view.
    if (this.inputLive) this.sendToModel(this.session!, mulaw);
    else this.hold(new Uint8Array(mulaw));
  }

  protected deliver(mulaw: Uint8Array): void {
    this.sendToModel(this.session!, mulaw);
  }

  onMarkEchoed(name: string, cleared: boolean): void {
    this.speech.onMarkEchoed(name, cleared);
  }

  protected isBusy(): boolean {
    return this.speech.current !== undefined;
  }

  protected sayLine(text: string, source: TranscriptSource): void {
    this.say(text, source);
  }

  protected sayThenHangUp(text: string, reason: string): void {
    this.say(text, 'closing', () => this.policy.hangUp(reason));
  }

  protected cutSpeech(): void {
    const speaking = this.speech.current;
    if (speaking) this.bargeIn(speaking, 'max_duration');
  }

  protected leaveVoicemail(text: string): Promise<VoicemailPlayback> {
    return this.voicemailSpeech.leaveMessage(text);
  }

  protected recordSpeechCutByClose(): void {
    const speaking = this.speech.current;
    if (speaking) this.speech.finish(speaking, true);
    // An opening line the model never began saying is still part of the call, heard by nobody.
    const line = this.lines.pending;
    if (line && isOpeningLine(line.source) && !this.openingSpoken) this.transcript.unheard(line, 'call_ended');
  }

  protected releaseEngines(): void {
    this.voicemailSpeech.callClosed();
    this.toolActions.close();
    this.lines.close();
    this.interruptions?.close();
    void this.session?.close();
  }

  private async connect(enginePromise: Promise<SpeechToSpeechEngine>, tools: ToolRunner): Promise<void> {
    const connection = await connectModel(enginePromise, { callId: this.context.callId, instructions: this.instructions, config: this.config, tools });
    if ('failure' in connection) return this.fail(connection.failure, connection.error);
    const { session } = connection;
    if (this.closed) {
      await session.close();
      return;
    }
    this.session = session;
    const record = (type: string) => (error: unknown) => this.context.recorder.event(type, errorPayload(error));
    session.on('audio', (event) => {
      if (this.closed) return;
      this.responses.seen(event.responseId, { spoke: true });
      this.speech.onAudio(event);
    });
    session.on('speech_started', () => this.onSpeechStarted());
    session.on('speech_stopped', (event) => this.onSpeechStopped(event));
    session.on('transcript', (event) => this.onTranscript(event));
    session.on('tool_call', (event) => void this.toolActions.onToolCall(event).catch(record('tool_error')));
    session.on('response_done', (event) => void this.onResponseDone(event).catch(record('realtime_error')));
    session.on('error', record('realtime_error'));
    session.on('closed', (event) => {
      if (!event.byClient && !this.closed) this.fail('realtime_connection_lost', event.error ?? new Error('connection closed'));
    });
    this.startConversation();
  }

  private sendToModel(session: SpeechToSpeechSession, mulaw: Uint8Array): void {
    if (session.sendAudio(mulaw)) this.inputBytesSent += mulaw.length;
  }

  /**
   * Asks the model to say a fixed line (greeting, idle prompt, filler, apology, closing words).
   * With `then`, that runs once the caller has heard it, or after a bound should the model stay silent.
   */
  private say(text: string, source: TranscriptSource, then?: () => Promise<void>, timeoutMs?: number): void {
    const session = this.session;
    if (!session?.isOpen) {
      if (then) void then();
      return;
    }
    this.lines.expect(text, source, then, timeoutMs);
    this.requestResponse(session, `Say exactly this, and nothing else: "${text}"`);
  }

  private requestResponse(session: SpeechToSpeechSession, instructions: string): void {
    this.responses.requested();
    session.createResponse({ instructions });
  }

  // ---- transcripts ------------------------------------------------------------------------

  private onTranscript(event: SpeechToSpeechTranscriptEvent): void {
    if (event.role === 'user') {
      if (!event.final || event.text.trim().length === 0) return;
      const now = this.clock.nowMs();
      this.transcript.turn('user', 'speech', event.text, this.speechStartedAtMs ?? now, now, null);
      return;
    }
    this.speech.onTranscript(event);
  }

  // ---- the caller's speech and barge-in -------------------------------------------------------

  private onSpeechStarted(): void {
    this.policy.callerSpoke();
    this.speechStartedAtMs = this.clock.nowMs();
    this.interruptions?.modelSpeechStarted();
  }

  private onSpeechStopped(event: SpeechActivityEvent): void {
    const now = this.clock.nowMs();
    // The model reports the end of speech as a position in the audio it was sent, and reports it
    // only after its silence window: the caller stopped that much audio before what was sent so far.
    const lagMs = this.inputBytesSent / MULAW_BYTES_PER_MS - event.audioMs;
    const endOfSpeechMs = event.audioMs > 0 && lagMs >= 0 && lagMs <= MAX_TRUSTED_VAD_LAG_MS ? now - lagMs : now;
    this.speech.nextTurnEnd = { endOfSpeechMs, endOfTurnMs: now };
    this.interruptions?.modelSpeechStopped();
  }

  private onCallerInterruption(speech: CallerInterruption): void {
    const item = this.speech.current;
    if (this.closed || this.policy.ending || !item) return;
    this.bargeIn(item, 'speech', speech);
  }

  /** Barge-in: stop the audio on the call, stop the response, tell the model what the caller heard. */
  private bargeIn(item: SpokenItem, cause: 'speech' | 'dtmf' | 'max_duration', speech?: CallerInterruption): void {
    if (this.closed || this.speech.current !== item) return;
    const clearedAtMs = this.cut(item);
    const heardMs = item.tracker.heardSeconds * 1000;
    const round = (value: number | null | undefined): number | null => (value === null || value === undefined ? null : CallClock.round(value));
    this.context.recorder.event('barge_in', {
      cause,
      itemId: item.itemId,
      speechStartMs: round(speech?.speechStartMs),
      decisionFrameMs: round(speech?.decisionFrameMs),
      clearedAtMs: CallClock.round(clearedAtMs),
      heardMs: Math.round(heardMs),
      heardText: heardTextOf(item),
    });
    this.speech.finish(item, true);
  }

  /**
   * `item` spoke for maxReplyMs: what was sent plays out (the response's end closes the item as
   * usual), the model stops generating and is told the caller hears no more of the item than that.
   */
  private stopAtReplyLimit(item: SpokenItem): void {
    this.context.recorder.event('reply_limit_reached', { itemId: item.itemId, responseId: item.responseId, maxReplyMs: this.config.maxReplyMs, atMs: this.clock.nowMs() });
    this.session?.cancelResponse();
    if (this.session?.isOpen) this.session.truncate(item.itemId, this.config.maxReplyMs);
  }

  /** Stops `item` on the call and at the model, which is told what the caller heard of it; returns when the call's audio was cleared. */
  private cut(item: SpokenItem): number {
    this.output.clear();
    const clearedAtMs = this.clock.nowMs();
    this.session?.cancelResponse();
    if (this.session?.isOpen) this.session.truncate(item.itemId, item.tracker.heardSeconds * 1000);
    return clearedAtMs;
  }

  // ---- the end of a response ------------------------------------------------------------------

  private async onResponseDone(event: SpeechToSpeechResponseDoneEvent): Promise<void> {
    const seq = this.responses.done(event.responseId);
    if (event.status === 'failed') this.context.recorder.event('realtime_response_failed', { responseId: event.responseId });
    const line = this.lines.lineFor(event.responseId);
    this.lines.generatedBy(event.responseId);
    const item = this.speech.current;
    if (item && item.responseId === event.responseId) {
      this.speech.audioComplete(item);
      await waitForPlayback(item);
      if (!item.done) this.speech.finish(item, false);
    }
    if (this.closed) return;
    if (line) {
      const endsSomething = line.then !== undefined;
      await this.lines.finish(line);
      if (endsSomething) return;
    }
    if (this.toolActions.waiting) {
      if (!this.toolActions.responseDone(seq)) return;
      // The closing words may be in the tool's own response, still arriving or playing after the
      // follow-up is done: the call ends only once everything the model said has been heard.
      const speaking = this.speech.current;
      // Audio still arriving: that response's own response_done comes back here once it has played.
      if (speaking && !speaking.responseComplete) return;
      if (speaking) await waitForPlayback(speaking);
      await this.toolActions.performPending();
      return;
    }
    if (this.policy.ending) return;
    // A filler that failed is not worth an apology: the answer with the tool's result follows.
    if (event.status === 'failed' && line?.source !== 'tool_filler') return this.policy.answerFailed();
    // Only a model answer that worked ends a run of failures: a scripted line (the apology) always "works".
    if (event.status === 'completed' && !line) this.policy.answerWorked();
    this.policy.armIdle();
  }

  // ---- keypad -------------------------------------------------------------------------------

  /** A finished keypad input (`#` or a pause ends it), told to the model in words as the pipeline does. */
  protected answerKeys(digits: string[]): void {
    if (!this.session?.isOpen) return;
    const item = this.speech.current;
    if (item) this.bargeIn(item, 'dtmf');
    const text = describeDtmfInput(digits);
    const now = this.clock.nowMs();
    this.transcript.turn('user', 'dtmf', text, now, now, null);
    this.speech.nextTurnEnd = { endOfSpeechMs: undefined, endOfTurnMs: now };
    this.policy.pauseIdle();
    this.context.recorder.event('dtmf_forwarded', { digits: digits.join('') });
    // Per-response instructions replace the session's for that response: the agent's own prompt
    // goes along, so answering a key press does not make the model forget who it is.
    this.requestResponse(this.session, `${this.instructions}\n\n${text} on their keypad. React to it.`);
  }

  /** The voicemail starts: what the model is saying is cut (it was said over the greeting), a pending tool action is dropped. */
  private stopForVoicemail(): void {
    this.policy.markEnding();
    this.toolActions.drop();
    const item = this.speech.current;
    if (!item) return;
    this.cut(item);
    this.speech.finish(item, true);
  }
}
