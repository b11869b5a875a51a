import type { ConversationRecorder } from '../records/conversation-records';
import type { AssistantReply } from './assistant-reply';
import type { ConversationHistory } from './conversation-history';

/** A stable partial transcript starts a speculative reply once the caller has paused this long. */
export const SPECULATE_AFTER_SILENCE_MS = 150;

/** A reply started from a partial transcript, on its own fork of the history. */
export interface Speculation {
  reply: AssistantReply;
  history: ConversationHistory;
  text: string;
}

/** What the speculation needs from its call (the pipeline agent session). */
export interface SpeculationHost {
  /** The caller is mid-turn, the recogniser gives partials and the call is not ending. */
  mayStart(): boolean;
  /** Milliseconds of caller audio heard so far (the pause is measured against it). */
  heardMs(): number;
  /** Starts a held reply (nothing is played until released) answering `text` on a fork of the history. */
  startHeld(text: string): Speculation;
  recorder: ConversationRecorder;
}

/**
 * Speculative replies: once the recogniser's partial transcript is stable and the caller has
 * paused SPECULATE_AFTER_SILENCE_MS, the answer starts, held, on a fork of the history, so the LLM
 * and TTS run while the turn detector still waits out its silence. The final transcript adopts it
 * when it says the same words; otherwise it is cancelled and the turn is answered afresh.
 */
export class ReplySpeculation {
  private partialText = '';
  private silenceSinceMs: number | undefined;
  private pending: Speculation | undefined;

  constructor(private readonly host: SpeculationHost) {}

  /** A new caller turn: earlier partials say nothing about it. */
  speechStarted(): void {
    this.partialText = '';
  }

  /** A stable partial transcript of the current turn. */
  onStablePartial(text: string): void {
    this.partialText = text;
    this.maybeStart();
  }

  /** Every VAD frame: whether the caller is speaking, to time the pause. */
  onFrame(inSpeech: boolean, frameStartMs: number): void {
    if (inSpeech) this.silenceSinceMs = undefined;
    else this.silenceSinceMs ??= frameStartMs;
    this.maybeStart();
  }

  /** The final transcript: the speculation if it answered the same words (it is handed over), else none. */
  take(finalText: string): Speculation | undefined {
    const speculation = this.pending;
    this.pending = undefined;
    if (!speculation) return undefined;
    if (normaliseForComparison(speculation.text) === normaliseForComparison(finalText) && !speculation.reply.cancelled) return speculation;
    speculation.reply.cancel();
    this.host.recorder.event('speculation_discarded', { replyId: speculation.reply.id });
    return undefined;
  }

  cancel(): void {
    this.pending?.reply.cancel();
    this.pending = undefined;
  }

  private maybeStart(): void {
    if (this.pending || this.partialText.length === 0 || this.silenceSinceMs === undefined || !this.host.mayStart()) return;
    if (this.host.heardMs() - this.silenceSinceMs < SPECULATE_AFTER_SILENCE_MS) return;
    this.pending = this.host.startHeld(this.partialText);
    void this.pending.reply.generate();
  }
}

/** Case and punctuation do not make a different question. */
function normaliseForComparison(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}
