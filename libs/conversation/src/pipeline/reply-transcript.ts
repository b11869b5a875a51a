import type { CallClock } from '../call/call-clock';
import type { ConversationRecorder, TranscriptSource } from '../records/conversation-records';
import { TranscriptLog } from '../records/transcript-log';
import type { AssistantReply } from './assistant-reply';
import type { UserTurnTiming } from './caller-turns';


/** What a reply speaks for: its transcript source, and the caller's turn it answers (null for a scripted line). */
interface ReplyPurpose {
  source: TranscriptSource;
  timing: UserTurnTiming | null;
}

/**
 * The pipeline agent's transcript: the caller's turns, and each reply as the caller heard it, in
 * full or cut (with what was heard), with the latency waterfall of the turn it answered. A reply is
 * recorded only once its marks tell what was played.
 */
export class ReplyTranscript {
  private readonly log: TranscriptLog;
  /** Kept per reply, so that a reply cut after another began is still recorded for its own turn. */
  private readonly purposes = new WeakMap<AssistantReply, ReplyPurpose>();

  /** `firstIndex`: a call taken back after a warm transfer numbers its turns on. */
  constructor(
    private readonly recorder: ConversationRecorder,
    private readonly clock: CallClock,
    firstIndex: number | undefined,
  ) {
    this.log = new TranscriptLog(recorder, firstIndex);
  }

  userTurn(source: 'speech' | 'dtmf', text: string, startMs: number, endMs: number): void {
    this.log.turn('user', source, text, startMs, endMs);
  }

  /** A filler line said while a tool ran: a turn of its own, not part of the model's answer. */
  aside(text: string): void {
    const now = this.clock.nowMs();
    this.log.turn('assistant', 'tool_filler', text, now, now);
  }

  /** `reply` speaks for `source`, answering the caller's turn `timing` (null: a scripted line). */
  began(reply: AssistantReply, source: TranscriptSource, timing: UserTurnTiming | null): void {
    this.purposes.set(reply, { source, timing });
  }

  /** The reply was played in full: its turn, and its waterfall when it answered the caller. */
  heard(reply: AssistantReply): void {
    const { source, timing } = this.purposeOf(reply);
    const index = this.log.turn('assistant', source, reply.tracker.sentTextFrom(0), this.startOf(reply), this.clock.nowMs());
    if (timing) this.log.latency(index, { ...timing, ...reply.milestones });
  }

  /** The reply was cut (`why`): what was sent, with what was heard of it; nothing when nothing was sent. */
  cut(reply: AssistantReply, why: string, interruptedAtMs: number): void {
    const { source, timing } = this.purposeOf(reply);
    const sent = reply.tracker.sentTextFrom(0);
    if (sent.length === 0) return;
    const index = this.log.turn('assistant', source, sent, this.startOf(reply), this.clock.nowMs(), reply.tracker.heardTextFrom(0));
    if (timing) this.log.latency(index, { ...timing, ...reply.milestones, interruptedAtMs });
    this.recorder.event('assistant_turn_cut', { index, why });
  }

  /** A scripted line never played (see OpeningLine): a turn heard by nobody, and why. */
  unheard(line: { text: string; source: TranscriptSource }, why: string): void {
    const now = this.clock.nowMs();
    const index = this.log.turn('assistant', line.source, line.text, now, now, '');
    this.recorder.event('assistant_turn_cut', { index, why });
  }

  /** Closing words or a voicemail: what was sent, and what was heard when not all of it. */
  closing(reply: AssistantReply, heardText?: string): void {
    this.log.turn('assistant', this.purposeOf(reply).source, reply.tracker.sentTextFrom(0), this.startOf(reply), this.clock.nowMs(), heardText);
  }

  private purposeOf(reply: AssistantReply): ReplyPurpose {
    return this.purposes.get(reply) ?? { source: 'speech', timing: null };
  }

  private startOf(reply: AssistantReply): number {
    return reply.milestones.firstFrameSentMs ?? this.clock.nowMs();
  }
}
