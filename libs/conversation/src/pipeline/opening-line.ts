import type { ConversationRecorder, TranscriptSource } from '../records/conversation-records';
import type { AssistantReply } from './assistant-reply';
import type { ReplyTranscript } from './reply-transcript';

/** A scripted line: its words and what it is. */
export interface ScriptedLine {
  text: string;
  source: TranscriptSource;
}

/**
 * The call's opening line until the caller has heard it. A caller who speaks first is neither
 * talked over nor robbed of the greeting: a line not yet playing when they start talking waits
 * until they stop (`opening_line_deferred`) and is then the first thing they hear, before any
 * answer. Once it plays it is like any reply (barge-in cuts it, keeping what was heard). If it is
 * never played (the call ends, a voicemail starts, the time limit is up) it is still a transcript
 * turn, heard by nobody (heardText ''), with an `assistant_turn_cut` event saying why.
 */
export class OpeningLine {
  private line: ScriptedLine | undefined;
  /** The reply saying the line; undefined while the line waits for the caller to stop. */
  private reply: AssistantReply | undefined;
  private waiters: (() => void)[] = [];

  constructor(private readonly records: { recorder: ConversationRecorder; transcript: ReplyTranscript }) {}

  /** The line that waits for the caller to stop talking, if one does. */
  get deferred(): ScriptedLine | undefined {
    return this.reply === undefined ? this.line : undefined;
  }

  /** `reply` says the opening line. */
  saying(line: ScriptedLine, reply: AssistantReply): void {
    this.line = line;
    this.reply = reply;
  }

  /**
   * Caller audio held while the engines got ready is still being listened to (until `caughtUp`): the
   * line waits for it, as the caller may have spoken first. Then it is said at once, unless they are
   * talking (it waits for them to stop) or a turn of theirs ended meanwhile (that turn's end said it).
   */
  sayOnceCaughtUp(line: ScriptedLine, caughtUp: Promise<void>, callerSpeaking: () => boolean, say: (line: ScriptedLine) => void): void {
    this.line = line;
    this.reply = undefined;
    void caughtUp.then(() => {
      if (this.line !== line || this.reply !== undefined) return;
      if (callerSpeaking()) this.records.recorder.event('opening_line_deferred', { source: line.source, reason: 'caller_speaking', replyId: null });
      else say(this.takeDeferred()!);
    });
  }

  /**
   * The caller started talking before `reply` (cancelled: nothing of it had played) was heard: true
   * when it was the opening line, which now waits for them to stop. (A caller who talks while the
   * engines get ready is heard only once they are, after the line has begun: this covers them too.)
   */
  withdraw(reply: AssistantReply): boolean {
    const line = reply === this.reply ? this.line : undefined;
    if (!line) return false;
    this.reply = undefined;
    this.records.recorder.event('opening_line_deferred', { source: line.source, reason: 'caller_speaking', replyId: reply.id });
    return true;
  }

  /** The caller stopped: the deferred line, to be said now (saying() takes it up again). */
  takeDeferred(): ScriptedLine | undefined {
    const line = this.deferred;
    this.line = undefined;
    return line;
  }

  /** The reply saying the line is over (heard, cut, failed or withdrawn): answers waiting for it go on. */
  finished(reply: AssistantReply): void {
    if (reply !== this.reply) return;
    this.line = undefined;
    this.reply = undefined;
    this.wake();
  }

  /** Resolves once no opening line is waiting to be heard; undefined when none is (answer at once). */
  heard(): Promise<void> | undefined {
    if (this.line === undefined) return undefined;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * The line will not be said any more (`why`: call_ended, voicemail, max_duration). A line never
   * played is recorded as heard by nobody; one that played is recorded by whoever cut it.
   */
  abandon(why: string): void {
    const line = this.line;
    const played = this.reply?.hasPlayed ?? false;
    this.line = undefined;
    this.reply = undefined;
    this.wake();
    if (line && !played) this.records.transcript.unheard(line, why);
  }

  private wake(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}
