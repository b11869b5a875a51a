import { CallControlError, type WarmTransferPlan } from '../call/call-control';
import type { AgentConfig } from '@switchboard/agent-config';
import type { AgentCallContext } from './agent-session';

/**
 * The reason an agent gives the edge when a warm transfer took its caller: the stream ends, the
 * call does not (the edge hands it to the server's transfer, which ends or resumes it).
 */
export const WARM_TRANSFER_HAND_OFF = 'transfer_hold';

/** Three failed answers in a row: the agent gives up and ends the call rather than apologise for ever. */
export const MAX_CONSECUTIVE_FAILURES = 3;

/** What a call policy asks of the agent it supervises: the agent knows how to speak, the policy when. */
export interface CallPolicyAgent {
  /** The agent is speaking, or the caller is mid-turn: an idle prompt would talk over somebody. */
  isBusy(): boolean;
  /** Says a scripted line (idle prompt, apology); the line reaches the history as the caller hears it. */
  say(text: string, source: 'idle_prompt' | 'apology'): void | Promise<unknown>;
  /** Says closing words, then the policy hangs up with `reason` (the policy has marked the call as ending). */
  sayThenHangUp(text: string, reason: string): void | Promise<unknown>;
  /** Cuts whatever is playing or being prepared (the time limit is up). */
  cutSpeech(): void;
}

/**
 * The call rules the pipeline and realtime agents share, kept in one place so both behave the same:
 * idle prompts and the idle goodbye, the maximum duration, the failure budget (an apology, then
 * giving up after MAX_CONSECUTIVE_FAILURES), and ending or transferring the call. The agent tells
 * it what happened (an answer worked or failed, the caller spoke, the agent finished speaking); it
 * keeps the timers and counters and calls back into the agent to speak.
 */
export class CallPolicy {
  private idlePrompts = 0;
  private consecutiveFailures = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private maxDurationTimer: NodeJS.Timeout | undefined;
  private endingCall = false;
  private closed = false;

  constructor(
    private readonly context: AgentCallContext,
    private readonly config: AgentConfig,
    private readonly agent: CallPolicyAgent,
  ) {}

  /** The call is being ended or transferred: no new prompt, answer or barge-in. */
  get ending(): boolean {
    return this.endingCall;
  }

  /** Closing words are being said (an end_call or transfer tool): nothing else may start. */
  markEnding(): void {
    this.endingCall = true;
    clearTimeout(this.idleTimer);
  }

  /** Starts the time limit, counted from the start of the call (`elapsedMs` of it have passed). */
  startMaxDuration(elapsedMs: number): void {
    clearTimeout(this.maxDurationTimer);
    this.maxDurationTimer = setTimeout(() => void this.onMaxDuration(), Math.max(0, this.config.maxDurationS * 1000 - elapsedMs));
  }

  /** The agent finished what it was saying: the caller's silence counts from now. */
  armIdle(): void {
    clearTimeout(this.idleTimer);
    if (this.closed || this.endingCall) return;
    this.idleTimer = setTimeout(() => void this.onIdle(), this.config.idle.promptAfterMs);
  }

  /** Something is happening (the agent speaks, a key was pressed): no idle prompt meanwhile. */
  pauseIdle(): void {
    clearTimeout(this.idleTimer);
  }

  /** The caller spoke: the idle prompts start over. */
  callerSpoke(): void {
    clearTimeout(this.idleTimer);
    this.idlePrompts = 0;
  }

  /** A model answer worked: a run of failures is over (a scripted line, the apology, never ends one). */
  answerWorked(): void {
    this.consecutiveFailures = 0;
  }

  /** A model answer failed: apologise and let the caller repeat, or give up after too many in a row. */
  async answerFailed(): Promise<void> {
    if (this.closed) return;
    this.consecutiveFailures += 1;
    if (this.consecutiveFailures >= MAX_CONSECUTIVE_FAILURES) {
      this.context.recorder.event('agent_gave_up', { consecutiveFailures: this.consecutiveFailures });
      await this.hangUp('agent_error');
      return;
    }
    await this.agent.say(this.config.apologyMessage, 'apology');
  }

  async hangUp(reason: string): Promise<void> {
    if (this.closed) return;
    this.endingCall = true;
    try {
      await this.context.callControl.hangUp(reason);
    } catch (error) {
      this.context.recorder.event('hangup_failed', { message: messageOf(error) });
    }
    this.context.endCall(reason);
  }

  /**
   * Hands the call to `to` (cold), or puts the caller on hold while `to` is dialled (`warm`); when
   * the carrier refuses, the caller hears so and the call goes on. After a warm hand-off the server
   * records every step (transfer_hold, transfer_dialing, ...) and this agent's stream ends.
   */
  async transfer(to: string, warm?: WarmTransferPlan): Promise<void> {
    if (this.closed) return;
    this.endingCall = true;
    try {
      if (warm) {
        const { callControl } = this.context;
        if (!callControl.warmTransfer) throw new CallControlError('a warm transfer needs a phone call (the carrier holds the caller in a conference)');
        await callControl.warmTransfer({ to, ...warm });
        this.context.endCall(WARM_TRANSFER_HAND_OFF);
        return;
      }
      await this.context.callControl.transfer(to);
      this.context.recorder.event('call_transferred', { to });
      this.context.endCall('transferred');
    } catch (error) {
      this.endingCall = false;
      this.context.recorder.event('transfer_failed', { to, ...(warm && { mode: 'warm' }), message: messageOf(error) });
      await this.agent.say("Sorry, I couldn't transfer your call right now.", 'apology');
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.idleTimer);
    clearTimeout(this.maxDurationTimer);
  }

  private async onIdle(): Promise<void> {
    if (this.closed || this.endingCall || this.agent.isBusy()) return;
    if (this.idlePrompts >= this.config.idle.maxPrompts) {
      this.context.recorder.event('idle_timeout', { prompts: this.idlePrompts });
      this.markEnding();
      await this.agent.sayThenHangUp(this.config.idle.goodbye, 'idle_timeout');
      return;
    }
    this.idlePrompts += 1;
    await this.agent.say(this.config.idle.prompt, 'idle_prompt');
  }

  private async onMaxDuration(): Promise<void> {
    if (this.closed || this.endingCall) return;
    this.context.recorder.event('max_duration_reached', { maxDurationS: this.config.maxDurationS });
    this.agent.cutSpeech();
    this.markEnding();
    await this.agent.sayThenHangUp(this.config.maxDurationMessage, 'max_duration');
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
