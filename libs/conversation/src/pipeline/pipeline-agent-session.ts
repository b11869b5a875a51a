import { SpeechHysteresis, type TurnEndedEvent } from '@switchboard/inference';
import { AgentCore } from '../agent/agent-core';
import type { AgentAudioOutput, AgentCallContext } from '../agent/agent-session';
import { describeDtmfInput } from '../agent/dtmf-collector';
import { seedHistory } from '../agent/resumed-call';
import type { VoicemailPlayback } from '../agent/voicemail-drop';
import { CallClock } from '../call/call-clock';
import type { AgentConfig } from '@switchboard/agent-config';
import { renderPromptTemplate } from '@switchboard/agent-config';
import { waitUntilPlayed } from '../playback/playback-wait';
import { isOpeningLine, type TranscriptSource } from '../records/conversation-records';
import { errorPayload } from '../records/event-payloads';
import type { ToolAction, ToolRunner } from '../tools/tool-contracts';
import type { AssistantReply, ReplyEnd } from './assistant-reply';
import { CallReplies } from './call-replies';
import { speakClosingWords, speakVoicemail } from './closing-lines';
import { CallerTurns, roundOrNull, type UserTurnTiming } from './caller-turns';
import { ConversationHistory } from './conversation-history';
import { InterruptionDetector } from './interruption-detector';
import { OpeningLine } from './opening-line';
import type { PipelineEngines } from './pipeline-engines';
import { ReplySpeculation } from './reply-speculation';
import { ReplyTranscript } from './reply-transcript';
import type { TurnTranscription } from './turn-transcription';

/** Caller audio as the pipeline takes it: PCM16 at 8 kHz, with its arrival on the call clock. */
interface CallerFrame {
  pcm: Int16Array;
  atMs: number;
}

/**
 * One call of a `pipeline` agent: VAD + turn detection -> ASR -> LLM (+ tools) -> TTS, with
 * barge-in, speculative replies on stable partial transcripts, DTMF input, idle prompts, a maximum
 * duration, and every turn, tool call and latency waterfall recorded.
 *
 * Caller audio arrives at 8 kHz (the VAD's native rate: no resampling on the hot path); the
 * recogniser gets 16 kHz from one per-utterance resampler.
 */
export class PipelineAgentSession extends AgentCore<CallerFrame> {
  protected readonly slowStart = { code: 'engines_slow', notReady: "the pipeline's engines (VAD, recogniser, model, voice) were not ready" };
  private readonly turns: CallerTurns;
  private history: ConversationHistory;
  private readonly interruptions: InterruptionDetector;
  private engines: PipelineEngines | undefined;
  private readonly speculation: ReplySpeculation;

  private readonly replies: CallReplies;
  private currentReply: AssistantReply | undefined;
  private readonly transcript: ReplyTranscript;
  private readonly opening: OpeningLine;

  constructor(
    context: AgentCallContext,
    config: AgentConfig,
    output: AgentAudioOutput,
    tools: ToolRunner,
    engines: Promise<PipelineEngines>,
  ) {
    super(context, config, output);
    // A call taken back after a warm transfer numbers its turns on and remembers what was said.
    this.transcript = new ReplyTranscript(context.recorder, this.clock, context.resumed?.nextTranscriptIndex);
    this.opening = new OpeningLine({ recorder: context.recorder, transcript: this.transcript });
    this.turns = new CallerTurns(context, config, this.clock, {
      // Every VAD frame also goes to the interruption detector and the speculation's pause timer.
      onFrame: (frame) => {
        if (this.closed) return;
        this.interruptions.onFrame(frame);
        this.speculation.onFrame(this.interruptions.inSpeech, frame.startMs);
      },
      onSpeechStarted: () => this.onSpeechStarted(),
      onTurnEnded: (event, asr, timing) => void this.onTurnEnded(event, asr, timing),
      onStablePartial: (text) => this.speculation.onStablePartial(text),
      ignoresCaller: () => this.ignoresCaller,
      fail: (code, error) => this.fail(code, error),
    });
    this.replies = new CallReplies({
      context,
      config,
      output,
      tools,
      clock: this.clock,
      onPlaybackStarted: () => this.interruptions.setArmed(config.interruptions.enabled),
      onAside: (text) => this.transcript.aside(text),
    });
    this.history = new ConversationHistory(renderPromptTemplate(config.systemPrompt, this.variables));
    seedHistory(this.history, context.resumed?.priorTurns);
    const threshold = config.turn.threshold;
    this.interruptions = new InterruptionDetector(
      { threshold, negativeThreshold: SpeechHysteresis.defaultNegativeThreshold(threshold), minSpeechMs: config.interruptions.minSpeechMs },
      (speech) => this.onInterruption(speech.startMs, speech.detectedAtMs),
    );
    this.speculation = new ReplySpeculation({
      // Not while the opening line waits: it is said first, and an answer guessed without it would not know it.
      mayStart: () => this.turns.callerSpeaking && !this.policy.ending && this.engines?.asr.supportsPartials === true && !this.opening.deferred,
      heardMs: () => this.turns.heardMs,
      startHeld: (text) => {
        const history = this.history.fork();
        history.addUser(text);
        return { reply: this.newReply({ held: true, history }), history, text };
      },
      recorder: context.recorder,
    });
    void engines.then(
      (ready) => this.start(ready),
      (error: unknown) => this.fail('engines_unavailable', error),
    );
  }

  pushAudio(pcm: Int16Array): void {
    if (this.ignoresCaller) return;
    const atMs = this.clock.nowMs();
    // `pcm` is the call edge's reused buffer: held audio is copied, live audio is not (ingest
    // copies what it keeps into the caller-audio ring and the VAD stream's queue).
    if (this.inputLive) this.turns.push(pcm, atMs);
    else this.hold({ pcm: pcm.slice(), atMs });
  }

  onMarkEchoed(name: string, cleared: boolean): void {
    // Marks carry the reply id as prefix; older replies' late echoes are matched by their own trackers.
    this.currentReply?.tracker.onMarkEchoed(name, cleared);
  }

  protected isBusy(): boolean {
    return this.turns.callerSpeaking || this.currentReply !== undefined;
  }

  protected cutSpeech(): void {
    this.opening.abandon('max_duration');
    const playing = this.playingReply;
    if (playing) this.interrupt(playing, 'speech');
    else this.currentReply?.cancel();
    this.speculation.cancel();
  }

  protected recordSpeechCutByClose(): void {
    const playing = this.playingReply;
    if (playing) this.recordInterruptedReply(playing, 'call_ended', this.clock.nowMs());
    this.opening.abandon('call_ended');
  }

  /** The current reply while the caller hears it (not cancelled, its audio playing). */
  private get playingReply(): AssistantReply | undefined {
    const reply = this.currentReply;
    return reply && !reply.cancelled && reply.tracker.playing ? reply : undefined;
  }

  protected releaseEngines(): void {
    const reply = this.currentReply;
    reply?.cancel();
    // Nobody will echo marks any more: release whoever waits for the playback to finish.
    reply?.tracker.abandon();
    this.speculation.cancel();
    this.turns.close();
  }

  // ---- start-up ---------------------------------------------------------------------------

  private start(engines: PipelineEngines): void {
    if (this.closed) {
      engines.vad.close();
      return;
    }
    this.engines = engines;
    this.turns.listen(engines);
    this.startConversation();
  }

  protected deliver(frame: CallerFrame): void {
    this.turns.push(frame.pcm, frame.atMs);
  }

  /** After held caller audio, the opening line waits until the VAD has heard it: the caller may have spoken first. */
  protected override sayOpeningLine(text: string, source: TranscriptSource, heldAudio: boolean): void {
    if (!heldAudio) return void this.sayLine(text, source);
    this.opening.sayOnceCaughtUp({ text, source }, this.engines!.vad.drained(), () => this.turns.callerSpeaking, (line) => void this.sayLine(line.text, line.source));
  }

  // ---- caller speech ------------------------------------------------------------------------

  private onSpeechStarted(): void {
    this.policy.callerSpoke();
    this.speculation.speechStarted();
    const reply = this.currentReply;
    if (!reply || reply.cancelled || reply.hasPlayed) return;
    reply.cancel();
    // The opening line is not said over the caller: it waits until they stop.
    if (this.opening.withdraw(reply)) this.currentReply = undefined;
    // The caller went on talking before the answer was heard: drop it, the next turn answers both.
    else this.context.recorder.event('reply_discarded', { reason: 'caller_resumed_speaking', replyId: reply.id });
  }

  private async onTurnEnded(event: TurnEndedEvent, asr: TurnTranscription | undefined, timing: UserTurnTiming): Promise<void> {
    const { endOfTurnMs } = timing;
    if (this.playingReply) {
      // Short speech over the agent that did not interrupt it: a backchannel, not a turn.
      asr?.cancel();
      // A reply speculated from the backchannel's partial transcript answers nothing.
      this.speculation.cancel();
      this.context.recorder.event('backchannel_ignored', { startMs: timing.startMs, endMs: timing.endOfSpeechMs, speechMs: event.endMs - event.startMs });
      return;
    }
    const opening = this.opening.takeDeferred();
    // The caller stopped: the opening line they spoke before is the first thing they hear (an answer waits for it).
    if (opening) void this.sayLine(opening.text, opening.source);
    if (!asr) return;
    let text: string;
    try {
      text = await asr.finish();
    } catch (error) {
      if (this.closed || this.voicemail.active) return;
      this.speculation.cancel();
      this.context.recorder.event('asr_error', errorPayload(error));
      await this.policy.answerFailed();
      return;
    }
    if (this.closed || this.voicemail.active) return;
    timing.asrFinalMs = this.clock.nowMs();
    if (text.length === 0) {
      this.speculation.cancel();
      this.context.recorder.event('empty_transcript', { startMs: timing.startMs, endMs: timing.endOfSpeechMs });
      this.policy.armIdle();
      return;
    }
    this.transcript.userTurn('speech', text, timing.startMs ?? endOfTurnMs, timing.endOfSpeechMs ?? endOfTurnMs);
    await this.respond(text, timing);
  }

  protected answerKeys(digits: string[]): void {
    const playing = this.playingReply;
    if (playing) this.interrupt(playing, 'dtmf');
    const text = describeDtmfInput(digits);
    const now = this.clock.nowMs();
    this.transcript.userTurn('dtmf', text, now, now);
    void this.respond(text, { startMs: now, endOfSpeechMs: null, endOfTurnFrameMs: null, endOfTurnMs: now, asrFinalMs: null });
  }

  // ---- replies ------------------------------------------------------------------------------

  private async respond(userText: string, timing: UserTurnTiming): Promise<void> {
    // The caller hears the opening line before any answer.
    const opening = this.opening.heard();
    if (opening) await opening;
    if (this.closed || this.voicemail.active) return;
    this.policy.pauseIdle();
    // The previous reply is still being prepared (its words so far were heard and a tool is running):
    // the caller's new turn replaces it, or both answers would be spoken one after the other.
    const previous = this.currentReply;
    if (previous && !previous.cancelled) {
      previous.cancel();
      this.recordInterruptedReply(previous, 'superseded', this.clock.nowMs());
    }
    const speculation = this.speculation.take(userText);
    let reply: AssistantReply;
    if (speculation) {
      this.history = speculation.history;
      reply = speculation.reply;
      reply.releaseHold();
      this.context.recorder.event('speculation_adopted', { replyId: reply.id });
    } else {
      this.history.addUser(userText);
      reply = this.newReply();
    }
    this.currentReply = reply;
    // An interrupted reply keeps the waterfall of the turn it answered.
    this.transcript.began(reply, 'speech', timing);
    const end = await reply.generate();
    await this.afterReply(reply, end, timing);
  }

  /** A scripted line (first message, idle prompt, apology); it reaches the history as the caller hears it. */
  protected async sayLine(text: string, source: TranscriptSource): Promise<ReplyEnd> {
    this.policy.pauseIdle();
    const opening = isOpeningLine(source);
    // Any other line (the apology for a first turn that failed) comes after the opening line.
    if (!opening) await this.opening.heard();
    if (this.closed) return { kind: 'cancelled' };
    const reply = this.startScripted(source);
    if (opening) this.opening.saying({ text, source }, reply);
    const end = await reply.speakScripted(text);
    // An opening line the voice failed on holds nothing up: the apology (afterReply) comes next.
    if (end.kind === 'failed') this.opening.finished(reply);
    await this.afterReply(reply, end, null);
    this.opening.finished(reply);
    return end;
  }

  /** A scripted reply becomes the current one. */
  private startScripted(source: TranscriptSource): AssistantReply {
    const reply = this.newReply();
    this.currentReply = reply;
    this.transcript.began(reply, source, null);
    return reply;
  }

  /** A reply on the call's history (or a speculation's fork of it); the engines are ready. */
  private newReply(options: { held?: boolean; history?: ConversationHistory } = {}): AssistantReply {
    return this.replies.create(this.engines!, options.history ?? this.history, options.held);
  }

  /** Records the finished reply once the caller has heard it, then does what its tools asked. */
  private async afterReply(reply: AssistantReply, end: ReplyEnd, timing: UserTurnTiming | null): Promise<void> {
    if (end.kind === 'cancelled' || reply.cancelled) return;
    if (end.kind === 'failed') {
      this.context.recorder.event(end.stage === 'llm' ? 'llm_error' : 'tts_error', errorPayload(end.error));
      // What was already sent plays out (the caller hears the sentence end, not a cut), then the
      // apology; waiting for its marks also tells what of the failed answer was heard.
      if (reply.tracker.segmentOpen) reply.tracker.endSegment();
      await waitUntilPlayed(reply.tracker);
      if (reply.cancelled || this.closed) return;
      this.recordInterruptedReply(reply, end.stage === 'llm' ? 'llm_error' : 'tts_error', this.clock.nowMs());
      await this.policy.answerFailed();
      return;
    }
    await waitUntilPlayed(reply.tracker);
    this.interruptions.setArmed(false);
    if (reply.cancelled || this.closed) return;
    reply.writeSpokenToHistory();
    // Only a model answer that worked ends a run of failures: the scripted apology after a failure always "works".
    if (timing) this.policy.answerWorked();
    this.transcript.heard(reply);
    if (this.currentReply === reply) this.currentReply = undefined;
    await this.performAction(end.action);
  }

  private async performAction(action: ToolAction): Promise<void> {
    if (action.type === 'end_call') return this.policy.hangUp('agent_hangup');
    if (action.type === 'transfer') return this.policy.transfer(action.to, action.warm);
    this.policy.armIdle();
  }

  // ---- barge-in -----------------------------------------------------------------------------

  private onInterruption(speechStartMs: number, detectedAtMs: number): void {
    const playing = this.playingReply;
    if (!playing || !this.config.interruptions.enabled || this.policy.ending) return;
    this.interrupt(playing, 'speech', speechStartMs, detectedAtMs);
  }

  /** Barge-in: stop the agent's audio on the call, stop the reply, keep only what was heard. */
  private interrupt(reply: AssistantReply, cause: 'speech' | 'dtmf', speechStartMs?: number, detectedAtMs?: number): void {
    const clearedAtMs = this.stopPlaying(reply, 'barge_in');
    this.context.recorder.event('barge_in', {
      cause,
      replyId: reply.id,
      speechStartMs: speechStartMs === undefined ? null : this.turns.arrivalOf(speechStartMs),
      // When the frame that completed minSpeechMs of speech arrived: the platform's share of a barge-in = clearedAtMs - this.
      decisionFrameMs: detectedAtMs === undefined ? null : roundOrNull(this.turns.arrivalOf(detectedAtMs)),
      clearedAtMs: CallClock.round(clearedAtMs),
      heardText: reply.tracker.heardText,
    });
    reply.tracker.abandon();
    if (this.currentReply === reply) this.currentReply = undefined;
  }

  /** Clears the reply's audio on the call and cuts it (`why`), keeping what was heard; returns when the audio was cleared. */
  private stopPlaying(reply: AssistantReply, why: string): number {
    this.output.clear();
    const clearedAtMs = this.clock.nowMs();
    reply.cancel();
    this.interruptions.setArmed(false);
    this.recordInterruptedReply(reply, why, clearedAtMs);
    return clearedAtMs;
  }

  private recordInterruptedReply(reply: AssistantReply, why: string, interruptedAtMs: number): void {
    reply.writeHeardToHistory();
    // Filler lines said while a tool ran are turns of their own, not part of the model's answer.
    this.transcript.cut(reply, why, interruptedAtMs);
  }

  // ---- closing words ------------------------------------------------------------------------

  /**
   * The voicemail: whatever the agent was saying or preparing stops (cleared on the call: it was
   * said over the machine's greeting), then the message is said and waited for, bounded like every
   * playback wait. Caller audio is ignored from now on (pushAudio).
   */
  protected async leaveVoicemail(text: string): Promise<VoicemailPlayback> {
    this.policy.markEnding();
    this.speculation.cancel();
    this.turns.dropTurn();
    this.opening.abandon('voicemail');
    const playing = this.playingReply;
    if (playing) {
      this.stopPlaying(playing, 'voicemail');
      playing.tracker.abandon();
    } else {
      this.currentReply?.cancel();
    }
    this.interruptions.setArmed(false);
    return speakVoicemail(this.startScripted('voicemail'), text, { recorder: this.context.recorder, transcript: this.transcript, isClosed: () => this.closed });
  }

  protected async sayThenHangUp(text: string, reason: string): Promise<void> {
    this.policy.markEnding();
    await speakClosingWords(this.startScripted('closing'), text, this.transcript);
    await this.policy.hangUp(reason);
  }
}
