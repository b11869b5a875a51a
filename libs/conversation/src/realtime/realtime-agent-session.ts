import { decodeMulaw, encodeMulaw } from '@switchboard/audio';
import { EngineError } from '@switchboard/inference/contracts';
import type {
  SpeechActivityEvent,
  SpeechToSpeechAudioEvent,
  SpeechToSpeechEngine,
  SpeechToSpeechResponseDoneEvent,
  SpeechToSpeechSession,
  SpeechToSpeechToolCallEvent,
  SpeechToSpeechTranscriptEvent,
} from '@switchboard/inference/speech-to-speech';
import type { AgentAudioOutput, AgentCallContext, AgentSession } from '../agent/agent-session';
import { CallClock } from '../call/call-clock';
import type { AgentConfig } from '../config/agent-config.schema';
import { renderPromptTemplate, type PromptVariables } from '../config/prompt-variables';
import { describeDtmfInput, DtmfCollector } from '../pipeline/dtmf-collector';
import { PlaybackTracker, wordPrefix } from '../playback/playback-tracker';
import type { TranscriptSource } from '../records/conversation-records';
import type { ToolAction, ToolRunner } from '../tools/tool-contracts';

/** Caller audio held while the model's session is connecting (about 10 s of 20 ms frames). */
const MAX_FRAMES_BEFORE_CONNECTED = 500;
const PLAYBACK_ECHO_GRACE_MS = 3000;
/** How long the model gets to say a closing line (goodbye, transfer notice) before the call moves on. */
const CLOSING_WORDS_TIMEOUT_MS = 10_000;
/** mu-law at 8 kHz: bytes of caller audio per millisecond. */
const MULAW_BYTES_PER_MS = 8;
/** The model's end-of-speech position is believed only if it lies this close behind the audio sent. */
const MAX_TRUSTED_VAD_LAG_MS = 10_000;

/** When the caller's turn that an answer replies to ended (call offsets, ms). */
interface TurnEnd {
  endOfSpeechMs: number | undefined;
  endOfTurnMs: number;
}

/** One assistant item being spoken: its audio progress (marks) and its transcript. */
interface SpokenItem {
  itemId: string;
  responseId: string;
  /** 'speech' for the model's own answers; the line's source when the session asked for it. */
  source: TranscriptSource;
  /** The line the session asked for, recorded when the model's transcript is empty. */
  requestedText: string | undefined;
  tracker: PlaybackTracker;
  transcript: string;
  firstAudioMs: number;
  firstMarkEchoedMs: number | undefined;
  /** The caller's turn that led to it, when known. */
  turnEnd: TurnEnd | undefined;
  /** The response's audio is all here (response_done arrived). */
  responseComplete: boolean;
  done: boolean;
}

/**
 * A line the session asked the model to say (greeting, idle prompt, closing words) and what to do
 * once the caller has heard it. The neutral session API names no response on `createResponse`, so
 * the line belongs to the first response seen after the request (by its audio, tool call or done).
 */
interface RequestedLine {
  text: string;
  source: TranscriptSource;
  fromSeq: number;
  responseId: string | undefined;
  then: (() => Promise<void>) | undefined;
  fallback: NodeJS.Timeout | undefined;
}

/** A tool asked to end or transfer the call: done once the closing words that follow have played. */
interface PendingAction {
  action: ToolAction;
  /** Sequence number of the response that called the tool. */
  toolSeq: number;
  /** A response after the tool's has finished: the model had its turn to say its closing words. */
  followUpDone: boolean;
  fallback: NodeJS.Timeout;
}

/**
 * One call of a `realtime` agent: caller audio goes to a speech-to-speech model as mu-law (what
 * Twilio sends: no resampling), the model's audio comes back the same way. The model detects turns;
 * this session adds what the platform promises on every engine: barge-in judged by what the caller
 * heard (marks), backchannels ignored, tools, keypad input, transcripts, latency records, idle and
 * max duration.
 */
export class RealtimeAgentSession implements AgentSession {
  private readonly clock: CallClock;
  private readonly variables: PromptVariables;
  private readonly instructions: string;
  private readonly dtmf: DtmfCollector;
  private session: SpeechToSpeechSession | undefined;
  private pendingAudio: Uint8Array[] | undefined = [];
  /** Keypad inputs finished before the model was connected; answered once it is. */
  private heldDtmfInputs: string[][] = [];
  private encoded = new Uint8Array(160);
  /** Caller audio sent to the model so far: the clock its VAD positions (audio_start/end_ms) run on. */
  private inputBytesSent = 0;
  private current: SpokenItem | undefined;
  private itemCounter = 0;
  private transcriptIndex = 0;
  /** Responses in the order they were first seen; a line or a tool action is matched by these numbers. */
  private readonly responseSeqs = new Map<string, number>();
  private nextResponseSeq = 0;
  /** The highest sequence number of a response that produced audio. */
  private lastSpokenSeq = -1;
  /** Assistant transcript fragments that arrived before their item's first audio. */
  private earlyTranscript: { itemId: string; text: string } | undefined;
  private lastTurnEnd: TurnEnd | undefined;
  private speechStartedAtMs: number | undefined;
  private bargeInTimer: NodeJS.Timeout | undefined;
  private line: RequestedLine | undefined;
  private pendingAction: PendingAction | undefined;
  private readonly toolCalls = new Set<AbortController>();
  private idlePrompts = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private maxDurationTimer: NodeJS.Timeout | undefined;
  private ending = false;
  private closed = false;

  constructor(
    private readonly context: AgentCallContext,
    private readonly config: AgentConfig,
    private readonly output: AgentAudioOutput,
    private readonly tools: ToolRunner,
    engine: Promise<SpeechToSpeechEngine>,
  ) {
    this.clock = new CallClock(context.callStartedAt);
    this.variables = { callerNumber: context.callerNumber, calledNumber: context.calledNumber, callId: context.callId, params: context.streamParameters };
    this.instructions = renderPromptTemplate(this.config.systemPrompt, this.variables);
    this.dtmf = new DtmfCollector({ onInput: (digits) => this.onDtmfInput(digits) });
    void this.connect(engine);
  }

  pushAudio(pcm8k: Int16Array): void {
    if (this.closed) return;
    if (this.encoded.length < pcm8k.length) this.encoded = new Uint8Array(pcm8k.length);
    const mulaw = encodeMulaw(pcm8k, this.encoded.subarray(0, pcm8k.length));
    if (this.session) this.sendToModel(this.session, mulaw);
    else if (this.pendingAudio && this.pendingAudio.length < MAX_FRAMES_BEFORE_CONNECTED) this.pendingAudio.push(mulaw.slice());
  }

  onDtmf(digit: string): void {
    if (this.closed || this.ending) return;
    this.dtmf.push(digit);
  }

  onMarkEchoed(name: string, cleared: boolean): void {
    this.current?.tracker.onMarkEchoed(name, cleared);
  }

  close(reason: string): void {
    if (this.closed) return;
    if (this.current && !this.current.done) this.finishItem(this.current, true);
    this.closed = true;
    clearTimeout(this.idleTimer);
    clearTimeout(this.maxDurationTimer);
    clearTimeout(this.bargeInTimer);
    clearTimeout(this.pendingAction?.fallback);
    clearTimeout(this.line?.fallback);
    this.dtmf.close();
    // Nobody is left to hear a tool's answer: stop waiting for the business's endpoint.
    for (const controller of this.toolCalls) controller.abort();
    this.toolCalls.clear();
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
    session.on('audio', (event) => this.onAudio(event));
    session.on('speech_started', () => this.onSpeechStarted());
    session.on('speech_stopped', (event) => this.onSpeechStopped(event));
    session.on('transcript', (event) => this.onTranscript(event));
    session.on('tool_call', (event) => void this.onToolCall(event).catch((error: unknown) => this.context.recorder.event('tool_error', errorPayload(error))));
    session.on('response_done', (event) => void this.onResponseDone(event).catch((error: unknown) => this.context.recorder.event('realtime_error', errorPayload(error))));
    session.on('error', (error) => this.context.recorder.event('realtime_error', errorPayload(error)));
    session.on('closed', (event) => {
      if (!event.byClient && !this.closed) this.fail('realtime_connection_lost', event.error ?? new Error('connection closed'));
    });
    for (const frame of this.pendingAudio ?? []) this.sendToModel(session, frame);
    this.pendingAudio = undefined;
    const remainingMs = this.config.maxDurationS * 1000 - this.clock.nowMs();
    this.maxDurationTimer = setTimeout(() => this.onMaxDuration(), Math.max(0, remainingMs));
    if (this.config.firstMessage !== null) this.say(renderPromptTemplate(this.config.firstMessage, this.variables), 'first_message');
    else this.armIdleTimer();
    for (const digits of this.heldDtmfInputs.splice(0)) this.onDtmfInput(digits);
  }

  private sendToModel(session: SpeechToSpeechSession, mulaw: Uint8Array): void {
    if (session.sendAudio(mulaw)) this.inputBytesSent += mulaw.length;
  }

  /** The first time a response is seen it gets the next sequence number. */
  private seqOf(responseId: string): number {
    let seq = this.responseSeqs.get(responseId);
    if (seq === undefined) {
      seq = this.nextResponseSeq++;
      this.responseSeqs.set(responseId, seq);
    }
    return seq;
  }

  // ---- lines the session asks for ------------------------------------------------------------

  /**
   * Asks the model to say a fixed line (greeting, idle prompt, closing words). With `then`, that
   * runs once the caller has heard it, or after a bound should the model stay silent.
   */
  private say(text: string, source: TranscriptSource, then?: () => Promise<void>): void {
    const session = this.session;
    if (!session?.isOpen) {
      if (then) void then();
      return;
    }
    if (this.line) clearTimeout(this.line.fallback);
    const line: RequestedLine = { text, source, fromSeq: this.nextResponseSeq, responseId: undefined, then, fallback: undefined };
    // Should the model ignore the request, the line must not label a later answer as its own, and
    // what was to follow it (a hang-up) still happens.
    line.fallback = setTimeout(() => {
      if (line.then) this.context.recorder.event('closing_words_timeout', { source });
      void this.finishLine(line);
    }, CLOSING_WORDS_TIMEOUT_MS);
    this.line = line;
    session.createResponse({ instructions: `Say exactly this, and nothing else: "${text}"` });
  }

  /** The requested line this response says, if it is the first response seen since the request. */
  private lineFor(responseId: string): RequestedLine | undefined {
    const line = this.line;
    if (!line) return undefined;
    if (line.responseId === undefined && this.seqOf(responseId) >= line.fromSeq) line.responseId = responseId;
    return line.responseId === responseId ? line : undefined;
  }

  private async finishLine(line: RequestedLine): Promise<void> {
    if (this.line === line) this.line = undefined;
    clearTimeout(line.fallback);
    const then = line.then;
    line.then = undefined;
    if (then && !this.closed) await then();
  }

  // ---- model events ------------------------------------------------------------------------

  private onAudio(event: SpeechToSpeechAudioEvent): void {
    if (this.closed) return;
    this.lastSpokenSeq = Math.max(this.lastSpokenSeq, this.seqOf(event.responseId));
    let item = this.current;
    if (!item || item.itemId !== event.itemId) {
      if (item && !item.done) this.finishItem(item, false);
      item = this.startItem(event);
    }
    const pcm = decodeMulaw(event.audio);
    this.output.play(pcm);
    item.tracker.audioSent(pcm.length);
  }

  private startItem(event: SpeechToSpeechAudioEvent): SpokenItem {
    const line = this.lineFor(event.responseId);
    const early = this.earlyTranscript?.itemId === event.itemId ? this.earlyTranscript.text : '';
    this.earlyTranscript = undefined;
    this.itemCounter += 1;
    const item: SpokenItem = {
      itemId: event.itemId,
      responseId: event.responseId,
      source: line?.source ?? 'speech',
      requestedText: line?.text,
      tracker: new PlaybackTracker(this.output, 8000, `rt${this.itemCounter}`),
      transcript: early,
      firstAudioMs: this.clock.nowMs(),
      firstMarkEchoedMs: undefined,
      turnEnd: this.lastTurnEnd,
      responseComplete: false,
      done: false,
    };
    item.tracker.onFirstEcho(() => (item.firstMarkEchoedMs ??= this.clock.nowMs()));
    item.tracker.beginSegment('');
    this.current = item;
    this.lastTurnEnd = undefined;
    clearTimeout(this.idleTimer);
    return item;
  }

  private onSpeechStarted(): void {
    clearTimeout(this.idleTimer);
    this.idlePrompts = 0;
    this.speechStartedAtMs = this.clock.nowMs();
    const item = this.current;
    if (!item || item.done || !this.config.interruptions.enabled || this.ending) return;
    // Speech must last minSpeechMs before the agent yields: a short "uh-huh" is a backchannel.
    clearTimeout(this.bargeInTimer);
    this.bargeInTimer = setTimeout(() => this.bargeIn(item, 'speech'), this.config.interruptions.minSpeechMs);
  }

  private onSpeechStopped(event: SpeechActivityEvent): void {
    const now = this.clock.nowMs();
    // The model reports the end of speech as a position in the audio it was sent, and reports it
    // only after its silence window: the caller stopped that much audio before what was sent so far.
    const lagMs = this.inputBytesSent / MULAW_BYTES_PER_MS - event.audioMs;
    const endOfSpeechMs = event.audioMs > 0 && lagMs >= 0 && lagMs <= MAX_TRUSTED_VAD_LAG_MS ? now - lagMs : now;
    this.lastTurnEnd = { endOfSpeechMs, endOfTurnMs: now };
    if (this.bargeInTimer && this.speechStartedAtMs !== undefined && now - this.speechStartedAtMs < this.config.interruptions.minSpeechMs) {
      clearTimeout(this.bargeInTimer);
      this.bargeInTimer = undefined;
      this.context.recorder.event('backchannel_ignored', { speechMs: Math.round(now - this.speechStartedAtMs) });
    }
  }

  /** Barge-in: stop the audio at Twilio, stop the response, tell the model what the caller heard. */
  private bargeIn(item: SpokenItem, cause: 'speech' | 'dtmf' | 'max_duration'): void {
    this.bargeInTimer = undefined;
    if (this.closed || item.done || this.current !== item) return;
    this.output.clear();
    const clearedAtMs = this.clock.nowMs();
    this.session?.cancelResponse();
    const heardMs = item.tracker.heardSeconds * 1000;
    if (this.session?.isOpen) this.session.truncate(item.itemId, heardMs);
    this.context.recorder.event('barge_in', {
      cause,
      itemId: item.itemId,
      speechStartMs: cause === 'speech' && this.speechStartedAtMs !== undefined ? CallClock.round(this.speechStartedAtMs) : null,
      clearedAtMs: CallClock.round(clearedAtMs),
      heardMs: Math.round(heardMs),
      heardText: this.heardTextOf(item, this.spokenTextOf(item)),
    });
    this.finishItem(item, true);
  }

  private onTranscript(event: SpeechToSpeechTranscriptEvent): void {
    if (event.role === 'user') {
      if (!event.final || event.text.trim().length === 0) return;
      const now = this.clock.nowMs();
      this.recordTurn('user', 'speech', event.text, this.speechStartedAtMs ?? now, now, null);
      return;
    }
    const item = this.current?.itemId === event.itemId ? this.current : undefined;
    if (event.final) {
      if (item) item.transcript = event.text;
      return;
    }
    if (item) item.transcript += event.text;
    // Text can run ahead of audio: keep it for the item its audio will start.
    else if (this.earlyTranscript?.itemId === event.itemId) this.earlyTranscript.text += event.text;
    else this.earlyTranscript = { itemId: event.itemId, text: event.text };
  }

  private async onToolCall(event: SpeechToSpeechToolCallEvent): Promise<void> {
    const toolSeq = this.seqOf(event.responseId);
    const startedAtMs = this.clock.nowMs();
    const controller = new AbortController();
    this.toolCalls.add(controller);
    const outcome = await this.tools
      .run(
        { id: event.callId, name: event.name, arguments: event.arguments },
        { callId: this.context.callId, organizationId: this.context.organizationId, agentId: this.context.agentId, callerNumber: this.context.callerNumber, signal: controller.signal },
      )
      .finally(() => this.toolCalls.delete(controller));
    this.context.recorder.toolInvocation({
      toolCallId: event.callId,
      name: event.name,
      arguments: parseJsonOrRaw(event.arguments),
      result: outcome.result ?? null,
      error: outcome.error ?? null,
      startedAtMs: Math.round(startedAtMs),
      latencyMs: CallClock.round(this.clock.nowMs() - startedAtMs),
    });
    if (this.closed || !this.session?.isOpen) return;
    if (outcome.action.type !== 'none' && !this.pendingAction) {
      // Should the model stay silent after the tool result, the action still happens.
      const fallback = setTimeout(() => {
        this.context.recorder.event('closing_words_timeout', { tool: event.name });
        void this.performPending();
      }, CLOSING_WORDS_TIMEOUT_MS);
      this.pendingAction = { action: outcome.action, toolSeq, followUpDone: false, fallback };
    }
    // The model then answers, or says its closing words, in the response that follows.
    this.session.submitToolResult(event.callId, outcome.content);
  }

  private async onResponseDone(event: SpeechToSpeechResponseDoneEvent): Promise<void> {
    const seq = this.seqOf(event.responseId);
    if (event.status === 'failed') this.context.recorder.event('realtime_response_failed', { responseId: event.responseId });
    const line = this.lineFor(event.responseId);
    const item = this.current;
    if (item && item.responseId === event.responseId && !item.done) {
      item.responseComplete = true;
      await this.waitForPlayback(item);
      if (!item.done) this.finishItem(item, false);
    }
    if (this.closed) return;
    if (line) {
      const endsSomething = line.then !== undefined;
      await this.finishLine(line);
      if (endsSomething) return;
    }
    const pending = this.pendingAction;
    if (pending) {
      if (seq > pending.toolSeq) pending.followUpDone = true;
      if (!pending.followUpDone) return;
      // The closing words may be in the tool's own response, still arriving or playing after the
      // follow-up is done: the call ends only once everything the model said has been heard.
      const speaking = this.current;
      // Audio still arriving: that response's own response_done comes back here once it has played.
      if (speaking && !speaking.done && !speaking.responseComplete) return;
      if (speaking && !speaking.done) await this.waitForPlayback(speaking);
      await this.performPending();
      return;
    }
    if (!this.ending) this.armIdleTimer();
  }

  // ---- keypad ------------------------------------------------------------------------------

  /** A finished keypad input (`#` or a pause ends it), told to the model in words as the pipeline does. */
  private onDtmfInput(digits: string[]): void {
    if (this.closed || this.ending) return;
    if (!this.session) {
      this.heldDtmfInputs.push(digits);
      return;
    }
    if (!this.session.isOpen) return;
    const item = this.current;
    if (item && !item.done) this.bargeIn(item, 'dtmf');
    const text = describeDtmfInput(digits);
    const now = this.clock.nowMs();
    this.recordTurn('user', 'dtmf', text, now, now, null);
    this.lastTurnEnd = { endOfSpeechMs: undefined, endOfTurnMs: now };
    clearTimeout(this.idleTimer);
    this.context.recorder.event('dtmf_forwarded', { digits: digits.join('') });
    // Per-response instructions replace the session's for that response: the agent's own prompt
    // goes along, so answering a key press does not make the model forget who it is.
    this.session.createResponse({ instructions: `${this.instructions}\n\n${text} on their keypad. React to it.` });
  }

  // ---- tool actions, idle, max duration, hang-up ----------------------------------------------

  private async performPending(): Promise<void> {
    const pending = this.pendingAction;
    if (!pending || this.closed) return;
    this.pendingAction = undefined;
    clearTimeout(pending.fallback);
    // Closing words count when the tool's response, or one after it, spoke.
    await this.perform(pending.action, this.lastSpokenSeq >= pending.toolSeq);
  }

  private async perform(action: ToolAction, modelSpoke: boolean): Promise<void> {
    if (action.type === 'end_call') {
      if (modelSpoke) return this.hangUp('agent_hangup');
      // The model hung up without a word: the configured goodbye is said first.
      this.ending = true;
      return this.say(action.goodbye, 'closing', () => this.hangUp('agent_hangup'));
    }
    if (action.type !== 'transfer') return;
    if (modelSpoke) return this.transfer(action.to);
    this.ending = true;
    this.say(action.message, 'closing', () => this.transfer(action.to));
  }

  private async transfer(to: string): Promise<void> {
    if (this.closed) return;
    this.ending = true;
    try {
      await this.context.callControl.transfer(to);
      this.context.recorder.event('call_transferred', { to });
      this.context.endCall('transferred');
    } catch (error) {
      this.ending = false;
      this.context.recorder.event('transfer_failed', { to, ...errorPayload(error) });
      this.say("Sorry, I couldn't transfer your call right now.", 'apology');
    }
  }

  private armIdleTimer(): void {
    clearTimeout(this.idleTimer);
    if (this.closed || this.ending) return;
    this.idleTimer = setTimeout(() => this.onIdle(), this.config.idle.promptAfterMs);
  }

  private onIdle(): void {
    if (this.closed || this.ending || this.current) return;
    if (this.idlePrompts >= this.config.idle.maxPrompts) {
      this.context.recorder.event('idle_timeout', { prompts: this.idlePrompts });
      this.ending = true;
      this.say(this.config.idle.goodbye, 'closing', () => this.hangUp('idle_timeout'));
      return;
    }
    this.idlePrompts += 1;
    this.say(this.config.idle.prompt, 'idle_prompt');
  }

  private onMaxDuration(): void {
    if (this.closed || this.ending) return;
    this.context.recorder.event('max_duration_reached', { maxDurationS: this.config.maxDurationS });
    if (this.current && !this.current.done) this.bargeIn(this.current, 'max_duration');
    this.ending = true;
    clearTimeout(this.idleTimer);
    this.say(this.config.maxDurationMessage, 'closing', () => this.hangUp('max_duration'));
  }

  private async hangUp(reason: string): Promise<void> {
    if (this.closed) return;
    this.ending = true;
    try {
      await this.context.callControl.hangUp(reason);
    } catch (error) {
      this.context.recorder.event('hangup_failed', errorPayload(error));
    }
    this.context.endCall(reason);
  }

  private fail(code: string, error: unknown): void {
    if (this.closed) return;
    this.context.recorder.event('error', { code, ...errorPayload(error) });
    this.context.endCall('agent_error');
  }

  // ---- playback and records ------------------------------------------------------------------

  private async waitForPlayback(item: SpokenItem): Promise<void> {
    // The item's audio is complete: close its segment so its final mark says when it has all played.
    if (item.tracker.segmentOpen) item.tracker.endSegment();
    const boundMs = item.tracker.sentSeconds * 1000 + PLAYBACK_ECHO_GRACE_MS;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([item.tracker.whenDrained(), new Promise<void>((resolve) => (timer = setTimeout(resolve, boundMs)))]);
    clearTimeout(timer);
  }

  /** What the model said; the requested line when its transcript is missing (transcription off). */
  private spokenTextOf(item: SpokenItem): string {
    return item.transcript.trim().length > 0 ? item.transcript : (item.requestedText ?? '');
  }

  /** The words the caller heard: the heard share of the audio sent, applied to the text so far. */
  private heardTextOf(item: SpokenItem, text: string): string {
    const sentMs = item.tracker.sentSeconds * 1000;
    return wordPrefix(text, sentMs > 0 ? (item.tracker.heardSeconds * 1000) / sentMs : 0);
  }

  private finishItem(item: SpokenItem, interrupted: boolean): void {
    item.done = true;
    const text = this.spokenTextOf(item);
    const heardText = interrupted ? this.heardTextOf(item, text) : null;
    const index = this.recordTurn('assistant', item.source, text, item.firstAudioMs, this.clock.nowMs(), heardText);
    // As for the pipeline agent, a waterfall belongs to an answer, not to a line the agent says on its own.
    if (item.source === 'speech') {
      const round = (value: number | undefined): number | null => (value === undefined ? null : CallClock.round(value));
      this.context.recorder.turnLatency({
        turnIndex: index,
        endOfSpeechMs: round(item.turnEnd?.endOfSpeechMs),
        endOfTurnMs: round(item.turnEnd?.endOfTurnMs),
        asrFinalMs: null,
        // One model does all three steps: its first audio is its first token and first byte.
        llmFirstTokenMs: round(item.firstAudioMs),
        ttsFirstByteMs: round(item.firstAudioMs),
        firstFrameSentMs: round(item.firstAudioMs),
        firstMarkEchoedMs: round(item.firstMarkEchoedMs),
      });
    }
    if (item.tracker.segmentOpen) item.tracker.endSegment();
    if (interrupted) item.tracker.abandon();
    if (this.current === item) this.current = undefined;
  }

  private recordTurn(role: 'user' | 'assistant', source: TranscriptSource, text: string, startMs: number, endMs: number, heardText: string | null): number {
    const index = this.transcriptIndex++;
    this.context.recorder.transcriptTurn({ index, role, source, text, heardText, interrupted: heardText !== null, startMs: Math.round(startMs), endMs: Math.round(Math.max(startMs, endMs)) });
    return index;
  }
}

function errorPayload(error: unknown): Record<string, unknown> {
  if (error instanceof EngineError) return { engine: error.engine, code: error.code, message: error.message, retryable: error.retryable };
  return { message: error instanceof Error ? error.message : String(error) };
}

function parseJsonOrRaw(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
