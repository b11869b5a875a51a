import { decodeMulaw, encodeMulaw } from '@switchboard/audio';
import { EngineError } from '@switchboard/inference/contracts';
import type {
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
import { PlaybackTracker, wordPrefix } from '../playback/playback-tracker';
import type { ToolAction, ToolRunner } from '../tools/tool-contracts';

/** Caller audio held while the model's session is connecting (about 10 s of 20 ms frames). */
const MAX_FRAMES_BEFORE_CONNECTED = 500;
const PLAYBACK_ECHO_GRACE_MS = 3000;
/** How long the model gets to say its closing words after an end_call / transfer tool. */
const CLOSING_WORDS_TIMEOUT_MS = 10_000;

/** One assistant item being spoken: its audio progress (marks) and its transcript. */
interface SpokenItem {
  itemId: string;
  responseId: string;
  tracker: PlaybackTracker;
  transcript: string;
  firstAudioMs: number;
  firstFrameSentMs: number;
  firstMarkEchoedMs: number | undefined;
  /** The caller's end of speech that led to it, when known. */
  endOfSpeechMs: number | undefined;
  done: boolean;
  interrupted: boolean;
}

/**
 * One call of a `realtime` agent: caller audio goes to a speech-to-speech model as mu-law (what
 * Twilio sends: no resampling), the model's audio comes back the same way. The model detects turns;
 * this session adds what the platform promises on every engine: barge-in judged by what the caller
 * heard (marks), backchannels ignored, tools, transcripts, latency records, idle and max duration.
 */
export class RealtimeAgentSession implements AgentSession {
  private readonly clock: CallClock;
  private readonly variables: PromptVariables;
  private session: SpeechToSpeechSession | undefined;
  private pendingAudio: Uint8Array[] | undefined = [];
  private encoded = new Uint8Array(160);
  private current: SpokenItem | undefined;
  private transcriptIndex = 0;
  private lastSpeechStoppedMs: number | undefined;
  private speechStartedAtMs: number | undefined;
  private bargeInTimer: NodeJS.Timeout | undefined;
  /** A tool asked to end or transfer the call; done after the model's next response (its closing words) has played. */
  private pendingAction: { action: ToolAction; toolResponseId: string; fallback: NodeJS.Timeout } | undefined;
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
    void this.connect(engine);
  }

  pushAudio(pcm8k: Int16Array): void {
    if (this.closed) return;
    if (this.encoded.length < pcm8k.length) this.encoded = new Uint8Array(pcm8k.length);
    const mulaw = encodeMulaw(pcm8k, this.encoded.subarray(0, pcm8k.length));
    if (this.session) this.session.sendAudio(mulaw);
    else if (this.pendingAudio && this.pendingAudio.length < MAX_FRAMES_BEFORE_CONNECTED) this.pendingAudio.push(mulaw.slice());
  }

  onDtmf(digit: string): void {
    // The model hears audio, not keys: tell it in words, as the pipeline agent does.
    if (!this.session?.isOpen || this.ending) return;
    this.context.recorder.event('dtmf_forwarded', { digit });
    this.session.createResponse({ instructions: `The caller pressed the key "${digit}" on their keypad. React to it.` });
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
    if (this.pendingAction) clearTimeout(this.pendingAction.fallback);
    void this.session?.close();
    this.context.recorder.event('agent_closed', { reason });
  }

  private async connect(enginePromise: Promise<SpeechToSpeechEngine>): Promise<void> {
    let session: SpeechToSpeechSession;
    try {
      const engine = await enginePromise;
      const toolDefinitions = this.tools.definitions.map((tool) => ({ name: tool.name, description: tool.description, parametersSchema: tool.parameters }));
      session = await engine.connect({
        callId: this.context.callId,
        instructions: renderPromptTemplate(this.config.systemPrompt, this.variables),
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
    session.on('speech_stopped', () => this.onSpeechStopped());
    session.on('transcript', (event) => this.onTranscript(event));
    session.on('tool_call', (event) => void this.onToolCall(event));
    session.on('response_done', (event) => void this.onResponseDone(event));
    session.on('error', (error) => this.context.recorder.event('realtime_error', errorPayload(error)));
    session.on('closed', (event) => {
      if (!event.byClient && !this.closed) this.fail('realtime_connection_lost', event.error ?? new Error('connection closed'));
    });
    for (const frame of this.pendingAudio ?? []) session.sendAudio(frame);
    this.pendingAudio = undefined;
    const remainingMs = this.config.maxDurationS * 1000 - this.clock.nowMs();
    this.maxDurationTimer = setTimeout(() => this.onMaxDuration(), Math.max(0, remainingMs));
    if (this.config.firstMessage !== null) this.say(renderPromptTemplate(this.config.firstMessage, this.variables));
    else this.armIdleTimer();
  }

  /** Asks the model to say a fixed line (greeting, idle prompt, closing). */
  private say(text: string): void {
    this.session?.createResponse({ instructions: `Say exactly this, and nothing else: "${text}"` });
  }

  private onAudio(event: SpeechToSpeechAudioEvent): void {
    if (this.closed) return;
    let item = this.current;
    if (!item || item.itemId !== event.itemId) {
      if (item && !item.done) this.finishItem(item, false);
      const tracker = new PlaybackTracker(this.output, 8000, `rt${this.transcriptIndex}`);
      const now = this.clock.nowMs();
      item = { itemId: event.itemId, responseId: event.responseId, tracker, transcript: '', firstAudioMs: now, firstFrameSentMs: now, firstMarkEchoedMs: undefined, endOfSpeechMs: this.lastSpeechStoppedMs, done: false, interrupted: false };
      const created = item;
      tracker.onFirstEcho(() => (created.firstMarkEchoedMs ??= this.clock.nowMs()));
      tracker.beginSegment('');
      this.current = item;
      this.lastSpeechStoppedMs = undefined;
      clearTimeout(this.idleTimer);
    }
    const pcm = decodeMulaw(event.audio);
    this.output.play(pcm);
    item.tracker.audioSent(pcm.length);
  }

  private onSpeechStarted(): void {
    clearTimeout(this.idleTimer);
    this.idlePrompts = 0;
    this.speechStartedAtMs = this.clock.nowMs();
    const item = this.current;
    if (!item || item.done || !this.config.interruptions.enabled || this.ending) return;
    // Speech must last minSpeechMs before the agent yields: a short "uh-huh" is a backchannel.
    clearTimeout(this.bargeInTimer);
    this.bargeInTimer = setTimeout(() => this.bargeIn(item), this.config.interruptions.minSpeechMs);
  }

  private onSpeechStopped(): void {
    const now = this.clock.nowMs();
    this.lastSpeechStoppedMs = now;
    if (this.bargeInTimer && this.speechStartedAtMs !== undefined && now - this.speechStartedAtMs < this.config.interruptions.minSpeechMs) {
      clearTimeout(this.bargeInTimer);
      this.bargeInTimer = undefined;
      this.context.recorder.event('backchannel_ignored', { speechMs: Math.round(now - this.speechStartedAtMs) });
    }
  }

  private bargeIn(item: SpokenItem): void {
    this.bargeInTimer = undefined;
    if (this.closed || item.done || this.current !== item) return;
    this.output.clear();
    const clearedAtMs = this.clock.nowMs();
    this.session?.cancelResponse();
    const heardMs = item.tracker.heardSeconds * 1000;
    if (this.session?.isOpen) this.session.truncate(item.itemId, heardMs);
    this.context.recorder.event('barge_in', { cause: 'speech', itemId: item.itemId, speechStartMs: this.speechStartedAtMs === undefined ? null : CallClock.round(this.speechStartedAtMs), clearedAtMs: CallClock.round(clearedAtMs), heardMs: Math.round(heardMs) });
    this.finishItem(item, true);
  }

  private onTranscript(event: SpeechToSpeechTranscriptEvent): void {
    if (!event.final) {
      if (event.role === 'assistant' && this.current?.itemId === event.itemId) this.current.transcript += event.text;
      return;
    }
    if (event.role === 'user') {
      const now = this.clock.nowMs();
      this.recordTurn('user', 'speech', event.text, Math.round(this.speechStartedAtMs ?? now), Math.round(now), null);
      return;
    }
    if (this.current?.itemId === event.itemId) this.current.transcript = event.text;
  }

  private async onToolCall(event: SpeechToSpeechToolCallEvent): Promise<void> {
    const startedAtMs = this.clock.nowMs();
    const controller = new AbortController();
    const outcome = await this.tools.run(
      { id: event.callId, name: event.name, arguments: event.arguments },
      { callId: this.context.callId, organizationId: this.context.organizationId, agentId: this.context.agentId, callerNumber: this.context.callerNumber, signal: controller.signal },
    );
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
      const action = outcome.action;
      // Should the model stay silent after the tool result, the action still happens.
      const fallback = setTimeout(() => void this.performPending(), CLOSING_WORDS_TIMEOUT_MS);
      this.pendingAction = { action, toolResponseId: event.responseId, fallback };
    }
    // The model then says its closing words (goodbye / transfer notice) in the response that follows.
    this.session.submitToolResult(event.callId, outcome.content);
  }

  private async onResponseDone(event: SpeechToSpeechResponseDoneEvent): Promise<void> {
    if (event.status === 'failed') this.context.recorder.event('realtime_response_failed', { responseId: event.responseId });
    const item = this.current;
    if (item && item.responseId === event.responseId && !item.done) {
      await this.waitForPlayback(item);
      if (!item.done) this.finishItem(item, false);
    }
    if (this.closed) return;
    if (this.pendingAction && this.pendingAction.toolResponseId !== event.responseId) await this.performPending();
    else if (!this.ending) this.armIdleTimer();
  }

  private async performPending(): Promise<void> {
    const pending = this.pendingAction;
    if (!pending || this.closed) return;
    this.pendingAction = undefined;
    clearTimeout(pending.fallback);
    await this.perform(pending.action);
  }

  private async perform(action: ToolAction): Promise<void> {
    if (action.type === 'end_call') return this.hangUp('agent_hangup');
    if (action.type !== 'transfer') return;
    this.ending = true;
    try {
      await this.context.callControl.transfer(action.to);
      this.context.recorder.event('call_transferred', { to: action.to });
      this.context.endCall('transferred');
    } catch (error) {
      this.ending = false;
      this.context.recorder.event('transfer_failed', { to: action.to, ...errorPayload(error) });
      this.say("Sorry, I couldn't transfer your call right now.");
    }
  }

  private finishItem(item: SpokenItem, interrupted: boolean): void {
    item.done = true;
    item.interrupted = interrupted;
    const sentMs = item.tracker.sentSeconds * 1000;
    const heardText = interrupted ? wordPrefix(item.transcript, sentMs > 0 ? (item.tracker.heardSeconds * 1000) / sentMs : 0) : null;
    const index = this.recordTurn('assistant', 'speech', item.transcript, Math.round(item.firstFrameSentMs), Math.round(this.clock.nowMs()), heardText);
    const round = (value: number | undefined): number | null => (value === undefined ? null : CallClock.round(value));
    this.context.recorder.turnLatency({
      turnIndex: index,
      endOfSpeechMs: round(item.endOfSpeechMs),
      endOfTurnMs: round(item.endOfSpeechMs),
      asrFinalMs: null,
      llmFirstTokenMs: round(item.firstAudioMs),
      ttsFirstByteMs: round(item.firstAudioMs),
      firstFrameSentMs: round(item.firstFrameSentMs),
      firstMarkEchoedMs: round(item.firstMarkEchoedMs),
    });
    if (item.tracker.segmentOpen) item.tracker.endSegment();
    if (interrupted) item.tracker.abandon();
    if (this.current === item) this.current = undefined;
  }

  private async waitForPlayback(item: SpokenItem): Promise<void> {
    // The item's audio is complete: close its segment so its final mark says when it has all played.
    if (item.tracker.segmentOpen) item.tracker.endSegment();
    const boundMs = item.tracker.sentSeconds * 1000 + PLAYBACK_ECHO_GRACE_MS;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([item.tracker.whenDrained(), new Promise<void>((resolve) => (timer = setTimeout(resolve, boundMs)))]);
    clearTimeout(timer);
  }

  private recordTurn(role: 'user' | 'assistant', source: 'speech' | 'closing', text: string, startMs: number, endMs: number, heardText: string | null): number {
    const index = this.transcriptIndex++;
    this.context.recorder.transcriptTurn({ index, role, source, text, heardText, interrupted: heardText !== null, startMs, endMs: Math.max(startMs, endMs) });
    return index;
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
      this.sayThenHangUp(this.config.idle.goodbye, 'idle_timeout');
      return;
    }
    this.idlePrompts += 1;
    this.say(this.config.idle.prompt);
  }

  private onMaxDuration(): void {
    if (this.closed || this.ending) return;
    this.context.recorder.event('max_duration_reached', { maxDurationS: this.config.maxDurationS });
    if (this.current && !this.current.done) this.bargeInNow();
    this.sayThenHangUp(this.config.maxDurationMessage, 'max_duration');
  }

  private bargeInNow(): void {
    if (this.current) this.bargeIn(this.current);
  }

  /** Says the closing line, then hangs up once it has played (or after a bound, if the model stays silent). */
  private sayThenHangUp(text: string, reason: string): void {
    this.ending = true;
    this.say(text);
    const session = this.session;
    const fallback = setTimeout(() => void this.hangUp(reason), CLOSING_WORDS_TIMEOUT_MS);
    const onDone = (event: SpeechToSpeechResponseDoneEvent): void => {
      session?.off('response_done', onDone);
      void (async () => {
        const item = this.current;
        if (item && item.responseId === event.responseId) await this.waitForPlayback(item);
        clearTimeout(fallback);
        await this.hangUp(reason);
      })();
    };
    session?.on('response_done', onDone);
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
