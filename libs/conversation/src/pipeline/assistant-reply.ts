import { EngineError, type LlmEngine, type LlmUsage, type ToolCall, type TtsEngine } from '@switchboard/inference';
import type { AgentAudioOutput } from '../agent/agent-session';
import type { CallClock } from '../call/call-clock';
import { PlaybackTracker } from '../playback/playback-tracker';
import type { ConversationRecorder } from '../records/conversation-records';
import { parseJsonOrRaw } from '../records/event-payloads';
import type { ToolAction, ToolCallContext, ToolRunner } from '../tools/tool-contracts';
import type { ConversationHistory } from './conversation-history';
import { SpeakableChunker } from './speakable-chunker';
import { SpeechQueue } from './speech-queue';

/** A model that keeps calling tools is stopped after this many rounds (each round is one LLM request). */
const MAX_TOOL_ROUNDS = 5;
/** A tool slower than this gets a filler line, so the caller is not left in silence. */
export const SLOW_TOOL_FILLER_AFTER_MS = 1000;

export interface ReplyMilestones {
  llmFirstTokenMs?: number;
  ttsFirstByteMs?: number;
  firstFrameSentMs?: number;
  firstMarkEchoedMs?: number;
}

export type ReplyEnd =
  | { kind: 'completed'; action: ToolAction }
  | { kind: 'cancelled' }
  | { kind: 'failed'; error: EngineError; stage: 'llm' | 'tts' };

export interface AssistantReplyDependencies {
  llm: LlmEngine;
  tts: TtsEngine;
  voice?: string;
  tools: ToolRunner;
  output: AgentAudioOutput;
  history: ConversationHistory;
  recorder: ConversationRecorder;
  clock: CallClock;
  toolContext: Omit<ToolCallContext, 'signal'>;
  temperature?: number;
  maxTokens?: number;
  /** The longest the reply may speak (the agent's maxReplyMs); unbounded when absent. */
  maxReplyMs?: number;
  /** Usage of every LLM request (the cost ledger meters it). */
  onLlmUsage?(usage: LlmUsage): void;
  onTtsCharacters?(characters: number): void;
  /** The reply's first audio went to the call (barge-in becomes possible). */
  onPlaybackStarted?(): void;
  /** A line said outside the model's answer (a filler while a slow tool runs). */
  onAside?(text: string): void;
}

/**
 * One agent reply: LLM tokens -> speakable chunks -> TTS -> the call, overlapped (the first chunk
 * is spoken while the model is still writing), with tool rounds in between. A reply can start
 * `held` (speculative: generated from a partial transcript, played only if the final transcript
 * agrees), and can be cancelled at any point (barge-in), after which nothing more is played.
 */
export class AssistantReply {
  readonly tracker: PlaybackTracker;
  readonly milestones: ReplyMilestones = {};
  private readonly controller = new AbortController();
  /** Stops the model (not the playback) once the reply has spoken as long as it may. */
  private readonly generation = new AbortController();
  private readonly speech: SpeechQueue;
  private historyWritten = false;
  /** Spoken text of the round in progress starts at this tracker segment. */
  private roundFirstSegment = 0;
  private roundText = '';
  private running: Promise<ReplyEnd> | undefined;

  constructor(
    private readonly deps: AssistantReplyDependencies,
    readonly id: string,
    options: { held?: boolean } = {},
  ) {
    this.tracker = new PlaybackTracker(deps.output, deps.tts.sampleRate, id, undefined, deps.maxReplyMs);
    this.tracker.onFirstEcho(() => (this.milestones.firstMarkEchoedMs ??= deps.clock.nowMs()));
    this.tracker.onLimitReached(() => this.stopAtLimit());
    this.speech = new SpeechQueue(deps.tts, deps.output, this.tracker, {
      callId: deps.toolContext.callId,
      voice: deps.voice,
      held: options.held,
      events: {
        onFirstAudio: () => (this.milestones.ttsFirstByteMs ??= deps.clock.nowMs()),
        onFirstPlayed: () => {
          this.milestones.firstFrameSentMs ??= deps.clock.nowMs();
          deps.onPlaybackStarted?.();
        },
        onSynthesized: (result) => deps.onTtsCharacters?.(result.characters),
      },
    });
  }

  get cancelled(): boolean {
    return this.controller.signal.aborted;
  }

  get hasPlayed(): boolean {
    return this.speech.hasPlayed;
  }

  /** The reply spoke as long as it may (maxReplyMs): what was sent plays out, nothing more is generated. */
  get limited(): boolean {
    return this.generation.signal.aborted;
  }

  /** Generates and speaks a reply to the history as it stands. */
  generate(): Promise<ReplyEnd> {
    this.running ??= this.run();
    return this.running;
  }

  /** Speaks fixed text (greeting, idle prompt, apology); nothing goes to the model but the history entry. */
  speakScripted(text: string): Promise<ReplyEnd> {
    this.running ??= (async (): Promise<ReplyEnd> => {
      this.speech.say(text);
      this.roundText = text;
      try {
        await this.speech.finish();
      } catch (error) {
        return this.cancelled ? { kind: 'cancelled' } : { kind: 'failed', error: asEngineError(error, this.deps.tts.name), stage: 'tts' };
      }
      return this.cancelled ? { kind: 'cancelled' } : { kind: 'completed', action: { type: 'none' } };
    })();
    return this.running;
  }

  releaseHold(): void {
    this.speech.releaseHold();
  }

  /**
   * Stops the reply: model, synthesis and playback. The history gets what the caller heard of it
   * (per mark echoes), once.
   */
  cancel(): void {
    if (this.cancelled) return;
    this.controller.abort();
    this.speech.cancel();
  }

  /** The model's words for this round as the caller heard them, added to the history once. */
  writeHeardToHistory(): void {
    if (this.historyWritten) return;
    this.historyWritten = true;
    this.deps.history.addAssistant(this.tracker.heardTextFrom(this.roundFirstSegment));
  }

  /** Adds the last round's full text to the history: called once the caller has heard it all. */
  writeSpokenToHistory(): void {
    if (this.historyWritten) return;
    this.historyWritten = true;
    // A reply cut at its longest was heard only as far as it was sent, not as far as the model wrote.
    this.deps.history.addAssistant(this.limited ? this.tracker.heardTextFrom(this.roundFirstSegment) : this.roundText);
  }

  private stopAtLimit(): void {
    if (this.cancelled || this.limited) return;
    this.generation.abort();
    this.deps.recorder.event('reply_limit_reached', { replyId: this.id, maxReplyMs: this.deps.maxReplyMs ?? null, atMs: this.deps.clock.nowMs() });
  }

  private async run(): Promise<ReplyEnd> {
    let action: ToolAction = { type: 'none' };
    for (let round = 0; round < MAX_TOOL_ROUNDS && !this.cancelled; round++) {
      this.roundFirstSegment = this.tracker.segmentCount;
      const outcome = await this.runRound();
      if (outcome.kind !== 'tools' || this.limited) return this.settleSpeech(outcome.kind === 'tools' ? { kind: 'completed', action: { type: 'none' } } : outcome);
      action = outcome.action;
      if (action.type !== 'none') break;
    }
    if (this.cancelled) return { kind: 'cancelled' };
    if (action.type === 'end_call' && this.roundText.trim().length === 0) this.speech.say(action.goodbye);
    if (action.type === 'transfer') this.speech.say(action.message);
    return this.settleSpeech({ kind: 'completed', action });
  }

  /** Waits for the last audio to be handed over; a TTS failure becomes the reply's failure. */
  private async settleSpeech(end: ReplyEnd): Promise<ReplyEnd> {
    try {
      await this.speech.finish();
    } catch (error) {
      if (this.cancelled) return { kind: 'cancelled' };
      this.writeHeardToHistory();
      return { kind: 'failed', error: asEngineError(error, this.deps.tts.name), stage: 'tts' };
    }
    // The history gets the words once they have been heard (see writeSpokenToHistory / writeHeardToHistory):
    // the audio is handed to the call faster than it plays, so the caller may still cut it short.
    if (this.cancelled) return { kind: 'cancelled' };
    return end;
  }

  private async runRound(): Promise<ReplyEnd | { kind: 'tools'; action: ToolAction }> {
    const chunker = new SpeakableChunker();
    const calls: ToolCall[] = [];
    this.roundText = '';
    this.historyWritten = false;
    try {
      const stream = this.deps.llm.stream({
        callId: this.deps.toolContext.callId,
        messages: this.deps.history.snapshot(),
        tools: this.deps.tools.definitions.length > 0 ? this.deps.tools.definitions : undefined,
        temperature: this.deps.temperature,
        maxTokens: this.deps.maxTokens,
        signal: AbortSignal.any([this.controller.signal, this.generation.signal]),
      });
      for await (const event of stream) {
        if (this.cancelled) return { kind: 'cancelled' };
        if (this.limited) break;
        if (event.type === 'text') {
          this.milestones.llmFirstTokenMs ??= this.deps.clock.nowMs();
          this.roundText += event.delta;
          for (const chunk of chunker.push(event.delta)) this.speech.say(chunk);
        } else if (event.type === 'tool_call') {
          this.milestones.llmFirstTokenMs ??= this.deps.clock.nowMs();
          calls.push({ id: event.id, type: 'function', function: { name: event.name, arguments: event.arguments } });
        } else if (event.usage) {
          this.deps.onLlmUsage?.(event.usage);
        }
      }
    } catch (error) {
      if (this.cancelled) return { kind: 'cancelled' };
      // Stopped at maxReplyMs: the reply is complete as far as it was spoken; its tool calls, half written, are not run.
      if (this.limited) return { kind: 'completed', action: { type: 'none' } };
      // The answer cannot be finished: its audio stops here and the session follows with an apology.
      this.speech.cancel();
      this.writeHeardToHistory();
      return { kind: 'failed', error: asEngineError(error, this.deps.llm.name), stage: 'llm' };
    }
    for (const chunk of chunker.flush()) this.speech.say(chunk);
    this.roundText = this.roundText.trim();
    if (calls.length === 0 || this.limited) return { kind: 'completed', action: { type: 'none' } };
    // The words before the tool calls end here: their last frame goes out while the tools run.
    this.speech.pause();
    return { kind: 'tools', action: await this.runTools(calls) };
  }

  private async runTools(calls: ToolCall[]): Promise<ToolAction> {
    let action: ToolAction = { type: 'none' };
    const results: { toolCallId: string; content: string }[] = [];
    for (const call of calls) {
      if (this.cancelled) {
        results.push({ toolCallId: call.id, content: JSON.stringify({ error: 'not run: the caller interrupted' }) });
        continue;
      }
      const startedAtMs = this.deps.clock.nowMs();
      const filler = this.deps.tools.fillerFor(call.function.name);
      const fillerTimer = filler ? setTimeout(() => this.sayFiller(filler), SLOW_TOOL_FILLER_AFTER_MS) : undefined;
      const outcome = await this.deps.tools.run(
        { id: call.id, name: call.function.name, arguments: call.function.arguments },
        { ...this.deps.toolContext, signal: this.controller.signal },
      );
      clearTimeout(fillerTimer);
      this.deps.recorder.toolInvocation({
        toolCallId: call.id,
        name: call.function.name,
        arguments: parseJsonOrRaw(call.function.arguments),
        result: outcome.result ?? null,
        error: outcome.error ?? null,
        startedAtMs: Math.round(startedAtMs),
        latencyMs: Math.round((this.deps.clock.nowMs() - startedAtMs) * 10) / 10,
      });
      results.push({ toolCallId: call.id, content: outcome.content });
      if (outcome.action.type !== 'none') action = outcome.action;
    }
    // Cut short while the tools ran: what was heard is in the history already, and the caller's next
    // words may be too, so a tool round added now would answer a question nobody is asking any more.
    if (this.historyWritten) return action;
    // The words spoken before the tool calls stay in the history as the caller heard them.
    const spoken = this.cancelled ? this.tracker.heardTextFrom(this.roundFirstSegment) : this.roundText;
    this.deps.history.addToolRound(spoken, calls, results);
    this.historyWritten = true;
    return action;
  }

  private sayFiller(text: string): void {
    if (this.cancelled) return;
    this.speech.say(text, { aside: true });
    this.speech.pause();
    this.deps.onAside?.(text);
  }
}

function asEngineError(error: unknown, engine: string): EngineError {
  if (error instanceof EngineError) return error;
  return new EngineError(engine, 'inference_failed', error instanceof Error ? error.message : String(error), false, { cause: error });
}
