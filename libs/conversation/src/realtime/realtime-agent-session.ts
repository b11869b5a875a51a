import { decodeMulaw } from '@switchboard/audio';
import type {
  SpeechActivityEvent,
  SpeechToSpeechEngine,
  SpeechToSpeechResponseDoneEvent,
  SpeechToSpeechSession,
  SpeechToSpeechToolCallEvent,
  SpeechToSpeechTranscriptEvent,
  VadStream,
} from '@switchboard/inference';
import type { AgentAudioOutput, AgentCallContext, AgentSession } from '../agent/agent-session';
import { CallPolicy } from '../agent/call-policy';
import { priorConversationNote, resumeLineOf } from '../agent/resumed-call';
import { VoicemailDrop } from '../agent/voicemail-drop';
import { CallClock } from '../call/call-clock';
import type { AgentConfig } from '../config/agent-config.schema';
import { promptVariablesOf, renderPromptTemplate, type PromptVariables } from '../config/prompt-variables';
import { describeDtmfInput, DtmfCollector } from '../pipeline/dtmf-collector';
import type { TranscriptSource } from '../records/conversation-records';
import type { ToolAction, ToolRunner } from '../tools/tool-contracts';
import { AgentSpeech } from './agent-speech';
import { PendingToolAction } from './pending-tool-action';
import { errorPayload } from './realtime-errors';
import { RealtimeInterruptions, type CallerInterruption } from './realtime-interruptions';
import { RealtimeToolCalls } from './realtime-tool-calls';
import { RealtimeTranscript } from './realtime-transcript';
import { RequestedLines } from './requested-lines';
import { ResponseLedger } from './response-ledger';
import { RealtimeVoicemail } from './realtime-voicemail';
import { heardTextOf, waitForPlayback, type SpokenItem } from './spoken-item';

/** Caller audio held while the model's session is connecting (about 10 s of 20 ms frames). */
const MAX_FRAMES_BEFORE_CONNECTED = 500;
/** mu-law at 8 kHz: bytes of caller audio per millisecond. */
const MULAW_BYTES_PER_MS = 8;
/** The model's end-of-speech position is believed only if it lies this close behind the audio sent. */
const MAX_TRUSTED_VAD_LAG_MS = 10_000;
/** Failed responses in a row after which the agent gives up and ends the call (as the pipeline agent does). */

/** What a realtime session runs on, besides the call. */
export interface RealtimeSessionDeps {
  tools: ToolRunner;
  engine: Promise<SpeechToSpeechEngine>;
  /** The call's own VAD stream, which judges barge-in (created only when interruptions are on). */
  createVad(): Promise<VadStream>;
}

/**
 * One call of a `realtime` agent: caller audio goes to a speech-to-speech model as mu-law (what
 * Twilio sends: no resampling), the model's audio comes back the same way. The model detects turns
 * and answers them; this session adds what the platform promises on every engine: barge-in judged
 * by the platform's own VAD and by what the caller heard (marks), backchannels ignored, tools
 * (with a filler line when slow), keypad input, an apology when the model fails, transcripts,
 * latency records, idle and max duration.
 */
export class RealtimeAgentSession implements AgentSession {
  private readonly clock: CallClock;
  private readonly variables: PromptVariables;
  private readonly instructions: string;
  private readonly dtmf: DtmfCollector;
  private readonly tools: ToolRunner;
  private readonly responses = new ResponseLedger();
  private readonly lines: RequestedLines;
  private readonly toolCalls: RealtimeToolCalls;
  private readonly transcript: RealtimeTranscript;
  private readonly speech: AgentSpeech;
  private readonly pendingAction: PendingToolAction;
  /** Undefined when interruptions are off for this agent. */
  private readonly interruptions: RealtimeInterruptions | undefined;
  private session: SpeechToSpeechSession | undefined;
  private pendingAudio: Uint8Array[] | undefined = [];
  /** Keypad inputs finished before the model was connected; answered once it is. */
  private heldDtmfInputs: string[][] = [];
  /** Caller audio decoded for the barge-in VAD only (reused: the VAD copies what it keeps). */
  private decodedForVad = new Int16Array(160);
  /** Caller audio sent to the model so far: the clock its VAD positions (audio_start/end_ms) run on. */
  private inputBytesSent = 0;
  private speechStartedAtMs: number | undefined;
  /** Idle prompts, the time limit, the failure budget, hang-up and transfer: shared with the pipeline agent. */
  private readonly policy: CallPolicy;
  /** A machine answered (outbound, DetectMessageEnd): the message replaces the conversation. */
  private readonly voicemail: VoicemailDrop;
  private readonly voicemailSpeech: RealtimeVoicemail;
  private closed = false;

  constructor(
    private readonly context: AgentCallContext,
    private readonly config: AgentConfig,
    private readonly output: AgentAudioOutput,
    deps: RealtimeSessionDeps,
  ) {
    this.clock = new CallClock(context.callStartedAt);
    this.variables = promptVariablesOf(context);
    // A call taken back after a warm transfer: the new model session learns what was said before.
    this.instructions = renderPromptTemplate(this.config.systemPrompt, this.variables) + priorConversationNote(context.resumed?.priorTurns);
    this.tools = deps.tools;
    this.dtmf = new DtmfCollector({ onInput: (digits) => this.onDtmfInput(digits) });
    this.policy = new CallPolicy(context, config, {
      isBusy: () => this.speech.current !== undefined,
      say: (text, source) => this.say(text, source),
      sayThenHangUp: (text, reason) => this.say(text, 'closing', () => this.policy.hangUp(reason)),
      cutSpeech: () => {
        const speaking = this.speech.current;
        if (speaking) this.bargeIn(speaking, 'max_duration');
      },
    });
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
        this.policy.pauseIdle();
        this.voicemailSpeech.itemStarted(item);
      },
    });
    this.voicemailSpeech = new RealtimeVoicemail({
      stopConversation: () => this.stopForVoicemail(),
      say: (text, source, then, timeoutMs) => this.say(text, source, then, timeoutMs),
      isClosed: () => this.closed,
    });
    this.voicemail = new VoicemailDrop(context, this.variables, {
      leaveMessage: (text) => this.voicemailSpeech.leaveMessage(text),
      hangUp: (reason) => this.policy.hangUp(reason),
    });
    this.pendingAction = new PendingToolAction((toolName) => {
      this.context.recorder.event('closing_words_timeout', { tool: toolName });
      void this.performPending();
    });
    this.toolCalls = new RealtimeToolCalls({ tools: deps.tools, context, clock: this.clock, onSlow: (filler) => this.onSlowTool(filler) });
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
    void this.connect(deps.engine);
  }

  /** The caller's mu-law, straight from the call: to the model untouched, decoded only for the barge-in VAD. */
  pushMulaw(mulaw: Uint8Array): void {
    // A recording machine is listening once a voicemail starts: the model must not answer it.
    if (this.closed || this.voicemail.active) return;
    if (this.interruptions) {
      if (this.decodedForVad.length < mulaw.length) this.decodedForVad = new Int16Array(mulaw.length);
      this.interruptions.push(decodeMulaw(mulaw, this.decodedForVad.subarray(0, mulaw.length)));
    }
    // The engine encodes the view before sendAudio returns; held frames are copies (the edge reuses
    // `mulaw`), made with the constructor: a Buffer's slice() would be a view.
    if (this.session) this.sendToModel(this.session, mulaw);
    else if (this.pendingAudio && this.pendingAudio.length < MAX_FRAMES_BEFORE_CONNECTED) this.pendingAudio.push(new Uint8Array(mulaw));
    else if (this.pendingAudio) this.endForSlowModel();
  }

  /**
   * The model has not connected after ~10 s of caller audio. Holding more would grow without bound,
   * and dropping it would lose what the caller said: the call ends, saying why (as the edge does
   * when a stream token takes too long to check).
   */
  private endForSlowModel(): void {
    this.pendingAudio = undefined;
    this.fail(
      'realtime_connect_slow',
      new Error(`the speech-to-speech model had not connected after ${MAX_FRAMES_BEFORE_CONNECTED} frames of caller audio; the call was ended rather than drop them`),
    );
  }

  onDtmf(digit: string): void {
    if (this.closed || this.policy.ending) return;
    this.dtmf.push(digit);
  }

  onMarkEchoed(name: string, cleared: boolean): void {
    this.speech.onMarkEchoed(name, cleared);
  }

  onAnsweredBy(): void {
    // Before the model is connected, connect() looks at the verdict instead.
    if (!this.closed && this.session) this.voicemail.startIfDue();
  }

  close(reason: string): void {
    if (this.closed) return;
    const speaking = this.speech.current;
    if (speaking) this.speech.finish(speaking, true);
    this.closed = true;
    this.voicemailSpeech.callClosed();
    this.policy.close();
    this.pendingAction.close();
    this.lines.close();
    this.interruptions?.close();
    this.dtmf.close();
    this.toolCalls.abortAll();
    void this.session?.close();
    this.context.recorder.event('agent_closed', { reason });
  }

  private async connect(enginePromise: Promise<SpeechToSpeechEngine>): Promise<void> {
    let session: SpeechToSpeechSession;
    try {
      const engine = await enginePromise;
      // The call path passes telephone audio through as mu-law; an engine set up for PCM would
      // turn every frame into noise, so it is refused up front with a clear reason.
      if (engine.inputFormat !== 'mulaw8k' || engine.outputFormat !== 'mulaw8k') {
        return this.fail('realtime_audio_format', new Error(`the realtime engine must speak mulaw8k both ways (got ${engine.inputFormat} in, ${engine.outputFormat} out)`));
      }
      const toolDefinitions = this.tools.definitions.map((tool) => ({ name: tool.name, description: tool.description, parametersSchema: tool.parameters }));
      session = await engine.connect({
        callId: this.context.callId,
        instructions: this.instructions,
        voice: this.config.realtime.voice,
        tools: toolDefinitions,
        turnDetection: { type: this.config.realtime.turnDetection, threshold: this.config.turn.threshold, silenceDurationMs: this.config.turn.minSilenceMs, prefixPaddingMs: this.config.turn.prefixPaddingMs },
      });
    } catch (error) {
      return this.fail('realtime_connect_failed', error);
    }
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
    session.on('tool_call', (event) => void this.onToolCall(event).catch(record('tool_error')));
    session.on('response_done', (event) => void this.onResponseDone(event).catch(record('realtime_error')));
    session.on('error', record('realtime_error'));
    session.on('closed', (event) => {
      if (!event.byClient && !this.closed) this.fail('realtime_connection_lost', event.error ?? new Error('connection closed'));
    });
    const held = this.pendingAudio ?? [];
    this.pendingAudio = undefined;
    // The machine's verdict came before the model was ready (asynchronous detection): the message, no greeting.
    if (this.voicemail.startIfDue()) return;
    for (const frame of held) this.sendToModel(session, frame);
    this.policy.startMaxDuration(this.clock.nowMs());
    const resumeLine = resumeLineOf(this.config, this.context.resumed);
    if (resumeLine !== undefined) this.say(resumeLine, 'transfer_return');
    else if (this.config.firstMessage !== null) this.say(renderPromptTemplate(this.config.firstMessage, this.variables), 'first_message');
    else this.policy.armIdle();
    for (const digits of this.heldDtmfInputs.splice(0)) this.onDtmfInput(digits);
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

  /** Barge-in: stop the audio at Twilio, stop the response, tell the model what the caller heard. */
  private bargeIn(item: SpokenItem, cause: 'speech' | 'dtmf' | 'max_duration', speech?: CallerInterruption): void {
    if (this.closed || this.speech.current !== item) return;
    this.output.clear();
    const clearedAtMs = this.clock.nowMs();
    this.session?.cancelResponse();
    const heardMs = item.tracker.heardSeconds * 1000;
    if (this.session?.isOpen) this.session.truncate(item.itemId, heardMs);
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

  // ---- tools ----------------------------------------------------------------------------------

  private async onToolCall(event: SpeechToSpeechToolCallEvent): Promise<void> {
    const toolSeq = this.responses.seen(event.responseId);
    const outcome = await this.toolCalls.run(event);
    if (this.closed || !this.session?.isOpen) return;
    // The model takes one response at a time: a filler line still being generated goes first.
    const filler = this.lines.pending;
    if (filler?.source === 'tool_filler') await filler.generated;
    if (this.closed || !this.session.isOpen) return;
    // Should the model stay silent after the tool result, the action still happens after a bound.
    this.pendingAction.hold(outcome.action, toolSeq, event.name);
    // The model then answers, or says its closing words, in the response that follows.
    this.responses.requested();
    this.session.submitToolResult(event.callId, outcome.content);
  }

  /** A tool is slow: its filler line is said, unless the model is already saying something. */
  private onSlowTool(filler: string): void {
    if (this.closed || this.policy.ending || !this.session?.isOpen) return;
    if (this.responses.active || this.lines.pending) {
      this.context.recorder.event('tool_filler_skipped', { reason: 'response_active' });
      return;
    }
    this.say(filler, 'tool_filler');
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
    if (this.pendingAction.waiting) {
      if (!this.pendingAction.responseDone(seq)) return;
      // The closing words may be in the tool's own response, still arriving or playing after the
      // follow-up is done: the call ends only once everything the model said has been heard.
      const speaking = this.speech.current;
      // Audio still arriving: that response's own response_done comes back here once it has played.
      if (speaking && !speaking.responseComplete) return;
      if (speaking) await waitForPlayback(speaking);
      await this.performPending();
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
  private onDtmfInput(digits: string[]): void {
    if (this.closed || this.policy.ending) return;
    if (!this.session) {
      this.heldDtmfInputs.push(digits);
      return;
    }
    if (!this.session.isOpen) return;
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
    this.pendingAction.take();
    const item = this.speech.current;
    if (!item) return;
    this.output.clear();
    this.session?.cancelResponse();
    if (this.session?.isOpen) this.session.truncate(item.itemId, item.tracker.heardSeconds * 1000);
    this.speech.finish(item, true);
  }

  // ---- tool actions -------------------------------------------------------------------------

  private async performPending(): Promise<void> {
    if (this.closed) return;
    const pending = this.pendingAction.take();
    if (!pending) return;
    // Closing words count when the tool's response, or one after it, spoke.
    await this.perform(pending.action, this.responses.lastSpokenSeq >= pending.toolSeq);
  }

  private async perform(action: ToolAction, modelSpoke: boolean): Promise<void> {
    if (action.type === 'end_call') {
      if (modelSpoke) return this.policy.hangUp('agent_hangup');
      // The model hung up without a word: the configured goodbye is said first.
      this.policy.markEnding();
      return this.say(action.goodbye, 'closing', () => this.policy.hangUp('agent_hangup'));
    }
    if (action.type !== 'transfer') return;
    if (modelSpoke && !action.warm) return this.policy.transfer(action.to);
    this.policy.markEnding();
    // A warm transfer always says its hold message: the caller must know they are being put on hold.
    this.say(action.message, 'closing', () => this.policy.transfer(action.to, action.warm));
  }

  private fail(code: string, error: unknown): void {
    if (this.closed) return;
    this.context.recorder.event('error', { code, ...errorPayload(error) });
    this.context.endCall('agent_error');
  }
}
