import {
  CallerAudio,
  EngineError,
  SpeechHysteresis,
  type SpeechStartedEvent,
  TurnDetector,
  type TurnEndedEvent,
  type VadFrame,
} from '@switchboard/inference';
import type { AgentAudioOutput, AgentCallContext, AgentSession } from '../agent/agent-session';
import { CallPolicy } from '../agent/call-policy';
import { VoicemailDrop, type VoicemailPlayback } from '../agent/voicemail-drop';
import { resumeLineOf, seedHistory } from '../agent/resumed-call';
import { CallClock } from '../call/call-clock';
import type { AgentConfig } from '../config/agent-config.schema';
import { promptVariablesOf, renderPromptTemplate, type PromptVariables } from '../config/prompt-variables';
import type { TranscriptSource } from '../records/conversation-records';
import { TranscriptLog } from '../records/transcript-log';
import type { ToolAction, ToolRunner } from '../tools/tool-contracts';
import { AssistantReply, type ReplyEnd } from './assistant-reply';
import { ConversationHistory } from './conversation-history';
import { describeDtmfInput, DtmfCollector } from './dtmf-collector';
import { InterruptionDetector } from './interruption-detector';
import type { PipelineEngines } from './pipeline-engines';
import { ReplySpeculation } from './reply-speculation';
import { TurnTranscription } from './turn-transcription';
import { voicemailPlaybackOf } from '../playback/voicemail-playback';

/** Extra time allowed for Twilio to echo the last mark after the audio's own length. */
const PLAYBACK_ECHO_GRACE_MS = 3000;

/** What the caller said for one turn, and where it sits on the call clock. */
interface UserTurnTiming {
  startMs: number | null;
  endOfSpeechMs: number | null;
  endOfTurnFrameMs: number | null;
  endOfTurnMs: number | null;
  asrFinalMs: number | null;
}

/**
 * One call of a `pipeline` agent: VAD + turn detection -> ASR -> LLM (+ tools) -> TTS, with
 * barge-in, speculative replies on stable partial transcripts, DTMF input, idle prompts, a maximum
 * duration, and every turn, tool call and latency waterfall recorded.
 *
 * Caller audio arrives at 8 kHz (the VAD's native rate: no resampling on the hot path); the
 * recogniser gets 16 kHz from one per-utterance resampler.
 */
export class PipelineAgentSession implements AgentSession {
  private readonly clock: CallClock;
  /**
   * The caller's audio, buffered once for the call: turn detection reads utterances from it, the
   * recogniser re-reads from the start of speech, waterfalls map stream positions to arrival times.
   * 10 s: a turn's audio as the turn events carry it is its last 10 s (the recogniser gets the whole
   * turn, streamed from the start of speech as it comes).
   */
  private readonly callerAudio = new CallerAudio({ sampleRate: 8000, keepSeconds: 10 });
  private history: ConversationHistory;
  private readonly variables: PromptVariables;
  private readonly interruptions: InterruptionDetector;
  private readonly dtmf: DtmfCollector;
  private engines: PipelineEngines | undefined;
  private turnDetector: TurnDetector | undefined;
  /** Audio that arrived while the engines were being prepared. */
  private pendingAudio: { pcm: Int16Array; atMs: number }[] | undefined = [];
  /** Settles once the engines are ready (or failed). */
  private readonly ready: Promise<void>;

  /** The caller's turn being recognised, from its start of speech to its end. */
  private transcription: TurnTranscription | undefined;
  private userSpeechStartedAt: SpeechStartedEvent | undefined;
  private readonly speculation: ReplySpeculation;

  private currentReply: AssistantReply | undefined;
  /** The caller's turn each model reply answers (its waterfall's first steps), kept for a reply that gets cut. */
  private readonly replyTimings = new WeakMap<AssistantReply, UserTurnTiming>();
  private currentReplySource: TranscriptSource = 'speech';
  private replyCounter = 0;
  private readonly log: TranscriptLog;
  /** Idle prompts, the time limit, the failure budget, hang-up and transfer: shared with the realtime agent. */
  private readonly policy: CallPolicy;
  /** A machine answered (outbound, DetectMessageEnd): the message replaces the conversation. */
  private readonly voicemail: VoicemailDrop;
  private closed = false;

  constructor(
    private readonly context: AgentCallContext,
    private readonly config: AgentConfig,
    private readonly output: AgentAudioOutput,
    private readonly tools: ToolRunner,
    engines: Promise<PipelineEngines>,
  ) {
    this.clock = new CallClock(context.callStartedAt);
    // A call taken back after a warm transfer numbers its turns on and remembers what was said.
    this.log = new TranscriptLog(context.recorder, context.resumed?.nextTranscriptIndex);
    this.variables = promptVariablesOf(context);
    this.history = new ConversationHistory(renderPromptTemplate(config.systemPrompt, this.variables));
    seedHistory(this.history, context.resumed?.priorTurns);
    const threshold = config.turn.threshold;
    this.interruptions = new InterruptionDetector(
      { threshold, negativeThreshold: SpeechHysteresis.defaultNegativeThreshold(threshold), minSpeechMs: config.interruptions.minSpeechMs },
      (speech) => this.onInterruption(speech.startMs, speech.detectedAtMs),
    );
    this.dtmf = new DtmfCollector({ onInput: (digits) => this.onDtmfInput(digits) });
    this.speculation = new ReplySpeculation({
      mayStart: () => this.userSpeechStartedAt !== undefined && !this.policy.ending && this.engines?.asr.supportsPartials === true,
      heardMs: () => this.callerAudio.totalSamples / 8,
      startHeld: (text) => {
        const history = this.history.fork();
        history.addUser(text);
        return { reply: this.newReply({ held: true, history }), history, text };
      },
      recorder: context.recorder,
    });
    this.policy = new CallPolicy(context, config, {
      isBusy: () => this.userSpeechStartedAt !== undefined || this.currentReply !== undefined,
      // The line reaches the history as the caller hears it (afterReply / recordInterruptedReply).
      say: (text, source) => this.speakScripted(text, source),
      sayThenHangUp: (text, reason) => this.sayThenHangUp(text, reason),
      cutSpeech: () => {
        const reply = this.currentReply;
        if (reply && !reply.cancelled && reply.tracker.playing) this.interrupt(reply, 'speech');
        else reply?.cancel();
        this.speculation.cancel();
      },
    });
    this.voicemail = new VoicemailDrop(context, this.variables, {
      leaveMessage: (text) => this.leaveVoicemail(text),
      hangUp: (reason) => this.policy.hangUp(reason),
    });
    this.ready = engines.then(
      (ready) => this.start(ready),
      (error: unknown) => this.fail('engines_unavailable', error),
    );
  }

  pushAudio(pcm: Int16Array): void {
    // A recording machine is listening once a voicemail starts: nothing it hears is a turn.
    if (this.closed || this.voicemail.active) return;
    const atMs = this.clock.nowMs();
    // `pcm` is the call edge's reused buffer: held audio is copied, live audio is not (ingest
    // copies what it keeps into the caller-audio ring and the VAD stream's queue).
    if (this.pendingAudio) {
      this.pendingAudio.push({ pcm: pcm.slice(), atMs });
      return;
    }
    this.ingest(pcm, atMs);
  }

  onDtmf(digit: string): void {
    if (this.closed || this.voicemail.active) return;
    this.dtmf.push(digit);
  }

  onAnsweredBy(): void {
    // Before the engines are ready, start() looks at the verdict instead.
    if (!this.closed && this.engines) this.voicemail.startIfDue();
  }

  onMarkEchoed(name: string, cleared: boolean): void {
    // Marks carry the reply id as prefix; older replies' late echoes are matched by their own trackers.
    this.currentReply?.tracker.onMarkEchoed(name, cleared);
  }

  close(reason: string): void {
    if (this.closed) return;
    const reply = this.currentReply;
    if (reply && reply.tracker.playing && !reply.cancelled) this.recordInterruptedReply(reply, 'call_ended', this.clock.nowMs());
    this.closed = true;
    reply?.cancel();
    // Nobody will echo marks any more: release whoever waits for the playback to finish.
    reply?.tracker.abandon();
    this.speculation.cancel();
    this.transcription?.cancel();
    this.turnDetector?.close();
    this.dtmf.close();
    this.policy.close();
    this.context.recorder.event('agent_closed', { reason });
  }

  // ---- start-up ---------------------------------------------------------------------------

  private start(engines: PipelineEngines): void {
    if (this.closed) {
      engines.vad.close();
      return;
    }
    this.engines = engines;
    const threshold = this.config.turn.threshold;
    // Listening before the detector does: barge-in and the pause tracker see each frame first.
    engines.vad.listen({ onFrame: (frame) => this.closed || this.onVadFrame(frame), onError: (error) => this.fail('vad_failed', error) });
    this.turnDetector = new TurnDetector(engines.vad, {
      threshold,
      minSpeechMs: this.config.turn.minSpeechMs,
      minSilenceMs: this.config.turn.minSilenceMs,
      prefixPaddingMs: this.config.turn.prefixPaddingMs,
      endOfTurnClassifier: this.config.turn.endOfTurnModel ? engines.endOfTurnClassifier : undefined,
    }, this.callerAudio);
    this.turnDetector.onEvent((event) => {
      if (this.closed || this.voicemail.active) return;
      if (event.type === 'speech_started') this.onSpeechStarted(event);
      else if (event.type === 'turn_ended') void this.onTurnEnded(event);
      else this.context.recorder.event('end_of_turn_model_failed', { message: event.error.message });
    });
    this.policy.startMaxDuration(this.clock.nowMs());
    const pending = this.pendingAudio ?? [];
    this.pendingAudio = undefined;
    // The machine's verdict came before the stream (asynchronous detection): the message, no greeting.
    if (this.voicemail.startIfDue()) return;
    for (const frame of pending) this.ingest(frame.pcm, frame.atMs);
    const resumeLine = resumeLineOf(this.config, this.context.resumed);
    if (resumeLine !== undefined) void this.speakScripted(resumeLine, 'transfer_return');
    else if (this.config.firstMessage !== null) void this.speakScripted(renderPromptTemplate(this.config.firstMessage, this.variables), 'first_message');
    else this.policy.armIdle();
  }

  private ingest(pcm: Int16Array, atMs: number): void {
    this.callerAudio.append(pcm, atMs);
    this.transcription?.push(pcm);
    // The VAD stream orders the chunks and delivers their frames to us and the detector.
    try {
      this.turnDetector!.push(pcm);
    } catch (error) {
      this.fail('vad_failed', error);
    }
  }

  /** Every VAD frame also goes to the interruption detector and the speculation's pause timer. */
  private onVadFrame(frame: VadFrame): void {
    this.interruptions.onFrame(frame);
    this.speculation.onFrame(this.interruptions.inSpeech, frame.startMs);
  }

  // ---- caller speech ------------------------------------------------------------------------

  private onSpeechStarted(event: SpeechStartedEvent): void {
    this.policy.callerSpoke();
    this.userSpeechStartedAt = event;
    this.speculation.speechStarted();
    this.openAsr(event.audioStartMs);
    const reply = this.currentReply;
    // The caller went on talking before the answer was heard: drop it, the next turn answers both.
    if (reply && !reply.cancelled && !reply.hasPlayed) {
      reply.cancel();
      this.context.recorder.event('reply_discarded', { reason: 'caller_resumed_speaking', replyId: reply.id });
    }
  }

  private openAsr(fromStreamMs: number): void {
    this.transcription?.cancel();
    const options = { callId: this.context.callId, language: this.config.language, prompt: this.config.stt.prompt };
    this.transcription = TurnTranscription.open(this.engines!.asr, options, this.callerAudio.since(fromStreamMs), (text) => this.speculation.onStablePartial(text));
  }

  private async onTurnEnded(event: TurnEndedEvent): Promise<void> {
    const endOfTurnMs = this.clock.nowMs();
    const asr = this.transcription;
    this.transcription = undefined;
    this.userSpeechStartedAt = undefined;
    const timing: UserTurnTiming = {
      startMs: this.callerAudio.arrivalOf(event.startMs) ?? null,
      endOfSpeechMs: this.callerAudio.arrivalOf(event.endMs) ?? null,
      endOfTurnFrameMs: this.callerAudio.arrivalOf(event.detectedAtMs) ?? null,
      endOfTurnMs,
      asrFinalMs: null,
    };
    this.context.recorder.event('turn_ended', {
      reason: event.reason,
      endOfSpeechMs: roundOrNull(timing.endOfSpeechMs),
      // When the frame that completed the end-of-turn silence arrived: end-of-turn wait = this - endOfSpeechMs.
      decisionFrameMs: roundOrNull(timing.endOfTurnFrameMs),
      endOfTurnMs: CallClock.round(endOfTurnMs),
    });
    const reply = this.currentReply;
    if (reply && !reply.cancelled && reply.tracker.playing) {
      // Short speech over the agent that did not interrupt it: a backchannel, not a turn.
      asr?.cancel();
      // A reply speculated from the backchannel's partial transcript answers nothing.
      this.speculation.cancel();
      this.context.recorder.event('backchannel_ignored', { startMs: timing.startMs, endMs: timing.endOfSpeechMs, speechMs: event.endMs - event.startMs });
      return;
    }
    if (!asr) return;
    let text: string;
    try {
      text = await asr.finish();
    } catch (error) {
      if (this.closed || this.voicemail.active) return;
      this.speculation.cancel();
      this.context.recorder.event('asr_error', engineErrorPayload(error));
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
    this.log.turn('user', 'speech', text, timing.startMs ?? endOfTurnMs, timing.endOfSpeechMs ?? endOfTurnMs);
    await this.respond(text, timing);
  }

  private onDtmfInput(digits: string[]): void {
    if (this.closed || this.policy.ending) return;
    if (!this.engines) {
      // Keys pressed while the engines are still loading are answered once they are ready.
      void this.ready.then(() => this.onDtmfInput(digits));
      return;
    }
    const reply = this.currentReply;
    if (reply && !reply.cancelled && reply.tracker.playing) this.interrupt(reply, 'dtmf');
    const text = describeDtmfInput(digits);
    const now = this.clock.nowMs();
    this.log.turn('user', 'dtmf', text, now, now);
    void this.respond(text, { startMs: now, endOfSpeechMs: null, endOfTurnFrameMs: null, endOfTurnMs: now, asrFinalMs: null });
  }

  // ---- replies ------------------------------------------------------------------------------

  private async respond(userText: string, timing: UserTurnTiming): Promise<void> {
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
    this.currentReplySource = 'speech';
    // An interrupted reply keeps the waterfall of the turn it answered.
    this.replyTimings.set(reply, timing);
    const end = await reply.generate();
    await this.afterReply(reply, end, timing);
  }

  private async speakScripted(text: string, source: TranscriptSource): Promise<ReplyEnd> {
    this.policy.pauseIdle();
    const reply = this.newReply();
    this.currentReply = reply;
    this.currentReplySource = source;
    const end = await reply.speakScripted(text);
    await this.afterReply(reply, end, null);
    return end;
  }

  private newReply(options: { held?: boolean; history?: ConversationHistory } = {}): AssistantReply {
    const engines = this.engines!;
    this.replyCounter += 1;
    return new AssistantReply(
      {
        llm: engines.llm,
        tts: engines.tts,
        voice: this.config.tts.voice,
        tools: this.tools,
        output: this.output,
        history: options.history ?? this.history,
        recorder: this.context.recorder,
        clock: this.clock,
        toolContext: { callId: this.context.callId, organizationId: this.context.organizationId, agentId: this.context.agentId, callerNumber: this.context.callerNumber },
        temperature: this.config.llm.temperature,
        maxTokens: this.config.llm.maxTokens,
        onPlaybackStarted: () => this.interruptions.setArmed(this.config.interruptions.enabled),
        onAside: (text) => {
          const now = this.clock.nowMs();
          this.log.turn('assistant', 'tool_filler', text, now, now);
        },
      },
      `r${this.replyCounter}`,
      { held: options.held },
    );
  }

  /** Records the finished reply once the caller has heard it, then does what its tools asked. */
  private async afterReply(reply: AssistantReply, end: ReplyEnd, timing: UserTurnTiming | null): Promise<void> {
    if (end.kind === 'cancelled' || reply.cancelled) return;
    if (end.kind === 'failed') {
      this.context.recorder.event(end.stage === 'llm' ? 'llm_error' : 'tts_error', engineErrorPayload(end.error));
      // What was already sent plays out (the caller hears the sentence end, not a cut), then the
      // apology; waiting for its marks also tells what of the failed answer was heard.
      if (reply.tracker.segmentOpen) reply.tracker.endSegment();
      await this.waitForPlayback(reply);
      if (reply.cancelled || this.closed) return;
      this.recordInterruptedReply(reply, end.stage === 'llm' ? 'llm_error' : 'tts_error', this.clock.nowMs());
      await this.policy.answerFailed();
      return;
    }
    await this.waitForPlayback(reply);
    this.interruptions.setArmed(false);
    if (reply.cancelled || this.closed) return;
    reply.writeSpokenToHistory();
    // Only a model answer that worked ends a run of failures: the scripted apology after a failure always "works".
    if (timing) this.policy.answerWorked();
    const startMs = reply.milestones.firstFrameSentMs ?? this.clock.nowMs();
    const index = this.log.turn('assistant', this.currentReplySource, reply.tracker.sentTextFrom(0), startMs, this.clock.nowMs());
    if (timing) this.log.latency(index, { ...timing, ...reply.milestones });
    if (this.currentReply === reply) this.currentReply = undefined;
    await this.performAction(end.action);
  }

  private async waitForPlayback(reply: AssistantReply): Promise<void> {
    const boundMs = reply.tracker.sentSeconds * 1000 + PLAYBACK_ECHO_GRACE_MS;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([reply.tracker.whenDrained(), new Promise<void>((resolve) => (timer = setTimeout(resolve, boundMs)))]);
    clearTimeout(timer);
  }

  private async performAction(action: ToolAction): Promise<void> {
    if (action.type === 'end_call') return this.policy.hangUp('agent_hangup');
    if (action.type === 'transfer') return this.policy.transfer(action.to, action.warm);
    this.policy.armIdle();
  }

  // ---- barge-in -----------------------------------------------------------------------------

  private onInterruption(speechStartMs: number, detectedAtMs: number): void {
    const reply = this.currentReply;
    if (!reply || reply.cancelled || !reply.tracker.playing || !this.config.interruptions.enabled || this.policy.ending) return;
    this.interrupt(reply, 'speech', speechStartMs, detectedAtMs);
  }

  /** Barge-in: stop the agent's audio at Twilio, stop the reply, keep only what was heard. */
  private interrupt(reply: AssistantReply, cause: 'speech' | 'dtmf', speechStartMs?: number, detectedAtMs?: number): void {
    this.output.clear();
    const clearedAtMs = this.clock.nowMs();
    reply.cancel();
    this.interruptions.setArmed(false);
    this.recordInterruptedReply(reply, 'barge_in', clearedAtMs);
    this.context.recorder.event('barge_in', {
      cause,
      replyId: reply.id,
      speechStartMs: speechStartMs === undefined ? null : (this.callerAudio.arrivalOf(speechStartMs) ?? null),
      // When the frame that completed minSpeechMs of speech arrived: the platform's share of a barge-in = clearedAtMs - this.
      decisionFrameMs: detectedAtMs === undefined ? null : roundOrNull(this.callerAudio.arrivalOf(detectedAtMs) ?? null),
      clearedAtMs: CallClock.round(clearedAtMs),
      heardText: reply.tracker.heardText,
    });
    reply.tracker.abandon();
    if (this.currentReply === reply) this.currentReply = undefined;
  }

  private recordInterruptedReply(reply: AssistantReply, why: string, interruptedAtMs: number): void {
    const timing = this.replyTimings.get(reply) ?? null;
    reply.writeHeardToHistory();
    // Filler lines said while a tool ran are turns of their own, not part of the model's answer.
    const sent = reply.tracker.sentTextFrom(0);
    if (sent.length === 0) return;
    const startMs = reply.milestones.firstFrameSentMs ?? this.clock.nowMs();
    const index = this.log.turn('assistant', this.currentReplySource, sent, startMs, this.clock.nowMs(), reply.tracker.heardTextFrom(0));
    if (timing) this.log.latency(index, { ...timing, ...reply.milestones, interruptedAtMs });
    this.context.recorder.event('assistant_turn_cut', { index, why });
  }

  // ---- closing words ------------------------------------------------------------------------

  /**
   * The voicemail: whatever the agent was saying or preparing stops (cleared at Twilio: it was
   * said over the machine's greeting), then the message is said and waited for, bounded like every
   * playback wait. Caller audio is ignored from now on (pushAudio).
   */
  private async leaveVoicemail(text: string): Promise<VoicemailPlayback> {
    this.policy.markEnding();
    this.speculation.cancel();
    this.transcription?.cancel();
    this.transcription = undefined;
    this.userSpeechStartedAt = undefined;
    const current = this.currentReply;
    if (current && !current.cancelled && current.tracker.playing) {
      this.output.clear();
      current.cancel();
      this.recordInterruptedReply(current, 'voicemail', this.clock.nowMs());
      current.tracker.abandon();
    } else {
      current?.cancel();
    }
    this.interruptions.setArmed(false);
    const reply = this.newReply();
    this.currentReply = reply;
    this.currentReplySource = 'voicemail';
    const end = await reply.speakScripted(text);
    if (end.kind === 'failed') this.context.recorder.event('tts_error', engineErrorPayload(end.error));
    if (end.kind === 'completed') await this.waitForPlayback(reply);
    const playback = voicemailPlaybackOf(text, reply.tracker, this.closed);
    if (!this.closed && playback.sentMs > 0) {
      const startMs = reply.milestones.firstFrameSentMs ?? this.clock.nowMs();
      const heard = playback.heardInFull ? undefined : reply.tracker.heardTextFrom(0);
      this.log.turn('assistant', 'voicemail', reply.tracker.sentTextFrom(0), startMs, this.clock.nowMs(), heard);
    }
    return playback;
  }

  private async sayThenHangUp(text: string, reason: string): Promise<void> {
    this.policy.markEnding();
    const reply = this.newReply();
    this.currentReply = reply;
    this.currentReplySource = 'closing';
    const end = await reply.speakScripted(text);
    if (end.kind === 'completed') {
      await this.waitForPlayback(reply);
      const startMs = reply.milestones.firstFrameSentMs ?? this.clock.nowMs();
      this.log.turn('assistant', 'closing', reply.tracker.sentTextFrom(0), startMs, this.clock.nowMs());
    }
    await this.policy.hangUp(reason);
  }

  private fail(code: string, error: unknown): void {
    if (this.closed) return;
    this.context.recorder.event('error', { code, ...engineErrorPayload(error) });
    this.context.endCall('agent_error');
  }
}

function engineErrorPayload(error: unknown): Record<string, unknown> {
  if (error instanceof EngineError) return { engine: error.engine, code: error.code, message: error.message, retryable: error.retryable };
  return { message: error instanceof Error ? error.message : String(error) };
}

function roundOrNull(value: number | null): number | null {
  return value === null ? null : CallClock.round(value);
}
