import { renderPromptTemplate, type PromptVariables } from '@switchboard/agent-config';
import type { AgentCallContext } from './agent-session';

/**
 * The carrier's verdicts (machineDetection DetectMessageEnd) for an answering machine whose greeting has
 * ended: after the beep, after a long silence, or ended some other way. Only then is a message
 * recorded from its first word. `machine_start` (Enable) comes during the greeting, and `human`,
 * `fax` and `unknown` never leave a message (an `unknown` may be a person who has not spoken yet).
 */
export const MESSAGE_END_VERDICTS: readonly string[] = ['machine_end_beep', 'machine_end_silence', 'machine_end_other'];

/** The end reason of a call that left its voicemail (a call event `voicemail_left` says what was heard). */
export const VOICEMAIL_END_REASON = 'voicemail_left';

export function isMessageEndVerdict(answeredBy: string | null | undefined): boolean {
  return answeredBy !== null && answeredBy !== undefined && MESSAGE_END_VERDICTS.includes(answeredBy);
}

/** How the message went out, as the agent's playback tracking (the call's mark echoes) measured it. */
export interface VoicemailPlayback {
  /** The text spoken (the message with its variables filled in). */
  text: string;
  /** Audio sent to the call, and the part of it whose marks came back as played. */
  sentMs: number;
  heardMs: number;
  /** Every mark of the message came back as played (false: the wait's bound passed first, or nothing could be said). */
  heardInFull: boolean;
  /** The call ended while the message played (the machine hung up): nothing is left to hang up. */
  callEnded: boolean;
}

/** What an engine does for a voicemail; the drop decides when, records it and ends the call. */
export interface VoicemailSpeaker {
  /**
   * Stops the conversation for good (the current answer is cut and cleared at the call edge, caller audio
   * is ignored from now on: a recording machine is listening, nobody will answer), then says `text`
   * in the agent's voice and resolves once its last mark was echoed or a bound passed.
   */
  leaveMessage(text: string): Promise<VoicemailPlayback>;
  /** Hangs up through the call policy (the call's end reason becomes `reason`). */
  hangUp(reason: string): Promise<void>;
}

/**
 * Voicemail drop for one call, shared by the pipeline and realtime agents. It starts at most once:
 * when the agent starts with a machine verdict already known (asynchronous detection can decide
 * before the media stream starts), or when the verdict reaches the live agent. The call needs a
 * message (context.voicemailMessage: the call's own or its agent's default, fixed when the call
 * was placed) and a `machine_end_*` verdict; otherwise the agent converses as usual.
 */
export class VoicemailDrop {
  private state: 'waiting' | 'leaving' | 'left' = 'waiting';

  constructor(
    private readonly context: AgentCallContext,
    private readonly variables: PromptVariables,
    private readonly speaker: VoicemailSpeaker,
  ) {}

  /** The agent is leaving (or has left) a message: it must not start or answer anything else. */
  get active(): boolean {
    return this.state !== 'waiting';
  }

  /** Whether this call's verdict and settings call for a message now; starts it (once) when they do. */
  startIfDue(): boolean {
    if (this.state !== 'waiting') return true;
    const message = this.context.voicemailMessage;
    if (!message || !isMessageEndVerdict(this.context.answeredBy)) return false;
    this.state = 'leaving';
    void this.leave(renderPromptTemplate(message, this.variables));
    return true;
  }

  private async leave(text: string): Promise<void> {
    const answeredBy = this.context.answeredBy ?? null;
    this.context.recorder.event('voicemail_started', { answeredBy });
    const playback = await this.speaker.leaveMessage(text);
    this.state = 'left';
    // A message cut by the end of the call, or never spoken (the voice failed: its error is
    // recorded on its own), is recorded as such, with how much of it was heard.
    const outcome = playback.callEnded ? 'voicemail_cut' : playback.sentMs === 0 ? 'voicemail_failed' : 'voicemail_left';
    this.context.recorder.event(outcome, {
      answeredBy,
      message: playback.text,
      sentMs: Math.round(playback.sentMs),
      heardMs: Math.round(playback.heardMs),
      heardInFull: playback.heardInFull,
    });
    if (playback.callEnded) return;
    await this.speaker.hangUp(outcome === 'voicemail_left' ? VOICEMAIL_END_REASON : 'agent_error');
  }
}
