import { CallClock } from '../call/call-clock';
import type { AgentConfig } from '@switchboard/agent-config';
import { promptVariablesOf, renderPromptTemplate, type PromptVariables } from '@switchboard/agent-config';
import type { TranscriptSource } from '../records/conversation-records';
import { errorPayload } from '../records/event-payloads';
import type { AgentAudioOutput, AgentCallContext, AgentSession } from './agent-session';
import { CallPolicy } from './call-policy';
import { DtmfCollector } from './dtmf-collector';
import { InputHeldUntilReady, MAX_INPUT_HELD_UNTIL_READY } from './input-held-until-ready';
import { resumeLineOf } from './resumed-call';
import { VoicemailDrop, type VoicemailPlayback } from './voicemail-drop';

/** How an agent names the engines it waits for, when they are too slow to get ready. */
export interface SlowStart {
  /** The `error` event's code. */
  code: string;
  /** What was not ready, for the event's message ("the speech-to-speech model had not connected"). */
  notReady: string;
}

/**
 * What every agent does on a call, whatever runs its conversation: caller input held (bounded)
 * until the engines are ready, key presses collected into inputs, the call policy (idle prompts,
 * time limit, failure budget, hang-up, transfer), voicemail, the first message or the line that
 * takes a call back after a failed warm transfer, failing and closing. The pipeline and realtime
 * sessions extend it with what differs: how they listen, speak, and answer a key press.
 *
 * `Frame` is caller audio as the agent takes it (held frames are copies: the edge reuses buffers).
 */
export abstract class AgentCore<Frame> implements AgentSession {
  protected readonly clock: CallClock;
  protected readonly variables: PromptVariables;
  /** Idle prompts, the time limit, the failure budget, hang-up and transfer. */
  protected readonly policy: CallPolicy;
  /** A machine answered (outbound, DetectMessageEnd): the message replaces the conversation. */
  protected readonly voicemail: VoicemailDrop;
  protected closed = false;
  private readonly keypad: DtmfCollector;
  /** Until the engines are ready; undefined once they are, or once the call failed or closed. */
  private held: InputHeldUntilReady<Frame> | undefined = new InputHeldUntilReady();
  private live = false;

  constructor(
    protected readonly context: AgentCallContext,
    protected readonly config: AgentConfig,
    protected readonly output: AgentAudioOutput,
  ) {
    this.clock = new CallClock(context.callStartedAt);
    this.variables = promptVariablesOf(context);
    this.keypad = new DtmfCollector({ onInput: (digits) => this.onKeyInput(digits) });
    this.policy = new CallPolicy(context, config, {
      isBusy: () => this.isBusy(),
      // The line reaches the history as the caller hears it.
      say: (text, source) => this.sayLine(text, source),
      sayThenHangUp: (text, reason) => this.sayThenHangUp(text, reason),
      cutSpeech: () => this.cutSpeech(),
    });
    this.voicemail = new VoicemailDrop(context, this.variables, {
      leaveMessage: (text) => this.leaveVoicemail(text),
      hangUp: (reason) => this.policy.hangUp(reason),
    });
  }

  abstract onMarkEchoed(name: string, cleared: boolean): void;

  onDtmf(digit: string): void {
    // A voicemail marks the call as ending: nobody is there to press keys.
    if (this.closed || this.policy.ending) return;
    this.keypad.push(digit);
  }

  onAnsweredBy(): void {
    // Before the engines are ready, startConversation() looks at the verdict instead.
    if (!this.closed && this.live) this.voicemail.startIfDue();
  }

  close(reason: string): void {
    if (this.closed) return;
    this.recordSpeechCutByClose();
    this.closed = true;
    this.held = undefined;
    this.releaseEngines();
    this.keypad.close();
    this.policy.close();
    this.context.recorder.event('agent_closed', { reason });
  }

  /** What the agent says when its engines are too slow to get ready (see MAX_INPUT_HELD_UNTIL_READY). */
  protected abstract readonly slowStart: SlowStart;
  /** The agent is speaking, or the caller is mid-turn: an idle prompt would talk over somebody. */
  protected abstract isBusy(): boolean;
  /** Says a scripted line (first message, idle prompt, apology, ...). */
  protected abstract sayLine(text: string, source: TranscriptSource): void | Promise<unknown>;
  /** Says closing words, then hangs up through the policy with `reason`. */
  protected abstract sayThenHangUp(text: string, reason: string): void | Promise<unknown>;
  /** Cuts whatever is playing or being prepared (the time limit is up). */
  protected abstract cutSpeech(): void;
  /** Stops the conversation for good and says the voicemail (see VoicemailSpeaker). */
  protected abstract leaveVoicemail(text: string): Promise<VoicemailPlayback>;
  /** Caller audio, once the engines are ready (held frames first, in arrival order). */
  protected abstract deliver(frame: Frame): void;
  /** A finished keypad input, once the engines are ready and the call is not ending. */
  protected abstract answerKeys(digits: string[]): void;
  /** The call ends while the agent speaks: record what the caller heard of it. */
  protected abstract recordSpeechCutByClose(): void;
  /** The call is over: stop and release the engines. Never throws. */
  protected abstract releaseEngines(): void;

  /** Caller input goes straight to the engines once they are ready; before, it is held (hold()). */
  protected get inputLive(): boolean {
    return this.live;
  }

  /** A recording machine is listening once a voicemail starts: nothing it hears is a turn. */
  protected get ignoresCaller(): boolean {
    return this.closed || this.voicemail.active;
  }

  /** Holds caller audio (a copy) until the engines are ready; ends the call when too much is held. */
  protected hold(frame: Frame): void {
    if (this.held && !this.held.holdFrame(frame)) this.endForSlowStart();
  }

  /**
   * The engines are ready: the call begins, with what the caller sent meanwhile, and its opening
   * line; or, when a machine's verdict came first (asynchronous detection), its voicemail.
   */
  protected startConversation(): void {
    this.policy.startMaxDuration(this.clock.nowMs());
    const held = this.held?.take() ?? { frames: [], keyInputs: [] };
    this.held = undefined;
    this.live = true;
    if (this.voicemail.startIfDue()) return;
    for (const frame of held.frames) this.deliver(frame);
    const resumeLine = resumeLineOf(this.config, this.context.resumed);
    const heldAudio = held.frames.length > 0;
    if (resumeLine !== undefined) this.sayOpeningLine(resumeLine, 'transfer_return', heldAudio);
    else if (this.config.firstMessage !== null) this.sayOpeningLine(renderPromptTemplate(this.config.firstMessage, this.variables), 'first_message', heldAudio);
    else this.policy.armIdle();
    for (const digits of held.keyInputs) this.onKeyInput(digits);
  }

  /**
   * The call's opening line (first message, or the line after a failed warm transfer); `heldAudio`:
   * caller audio sent while the engines got ready was just delivered, and may still be listened to.
   */
  protected sayOpeningLine(text: string, source: TranscriptSource, _heldAudio: boolean): void {
    void this.sayLine(text, source);
  }

  /** Records why the agent cannot go on and ends the call with `agent_error`. */
  protected fail(code: string, error: unknown): void {
    if (this.closed) return;
    this.held = undefined;
    // The agent's code says what failed (realtime_connect_failed, vad_failed, ...); an engine
    // error's own code (unavailable, timeout, ...) says why, and is kept beside it as engineCode.
    const { code: engineCode, ...detail } = errorPayload(error);
    this.context.recorder.event('error', { ...detail, code, ...(engineCode === undefined ? {} : { engineCode }) });
    this.context.endCall('agent_error');
  }

  private onKeyInput(digits: string[]): void {
    if (this.closed || this.policy.ending) return;
    if (this.live) this.answerKeys(digits);
    // Keys pressed while the engines get ready are answered once they are, after the opening line.
    else if (this.held && !this.held.holdKeys(digits)) this.endForSlowStart();
  }

  /**
   * The engines are not ready after ~10 s of caller input. Holding more would grow without bound,
   * and dropping it would lose what the caller said: the call ends, saying why (as the edge does
   * when a call takes too long to authorise).
   */
  private endForSlowStart(): void {
    const { code, notReady } = this.slowStart;
    this.fail(code, new Error(`${notReady} after ${MAX_INPUT_HELD_UNTIL_READY} frames and key presses of caller input; the call was ended rather than drop them`));
  }
}
