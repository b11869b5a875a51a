import { CallClock } from '../call/call-clock';
import type { ConversationRecorder, TranscriptSource } from '../records/conversation-records';
import { heardTextOf, spokenTextOf, type SpokenItem } from './spoken-item';

/** The call's transcript turns and latency waterfalls, numbered in the order they are recorded. */
export class RealtimeTranscript {
  private nextIndex: number;

  /** `firstIndex`: where numbering starts (a call taken back after a warm transfer goes on from its earlier turns). */
  constructor(
    private readonly recorder: ConversationRecorder,
    private readonly clock: CallClock,
    firstIndex = 0,
  ) {
    this.nextIndex = firstIndex;
  }

  /** One turn; `heardText` is given for a cut assistant turn (what the caller heard of it). */
  turn(role: 'user' | 'assistant', source: TranscriptSource, text: string, startMs: number, endMs: number, heardText: string | null): number {
    const index = this.nextIndex++;
    this.recorder.transcriptTurn({ index, role, source, text, heardText, interrupted: heardText !== null, startMs: Math.round(startMs), endMs: Math.round(Math.max(startMs, endMs)) });
    return index;
  }

  /** A requested line the model never began saying (the call ended first): a turn heard by nobody, and why. */
  unheard(line: { text: string; source: TranscriptSource }, why: string): void {
    const now = this.clock.nowMs();
    const index = this.turn('assistant', line.source, line.text, now, now, '');
    this.recorder.event('assistant_turn_cut', { index, why });
  }

  /** An assistant item is over (played in full, or cut): its turn and, for a model answer, its waterfall. */
  item(item: SpokenItem, interrupted: boolean): void {
    const index = this.turn('assistant', item.source, spokenTextOf(item), item.firstAudioMs, this.clock.nowMs(), interrupted ? heardTextOf(item) : null);
    // As for the pipeline agent, a waterfall belongs to an answer, not to a line the agent says on its own.
    if (item.source !== 'speech') return;
    const round = (value: number | undefined): number | null => (value === undefined ? null : CallClock.round(value));
    this.recorder.turnLatency({
      turnIndex: index,
      endOfSpeechMs: round(item.turnEnd?.endOfSpeechMs),
      // The model decides the end of the turn inside its own service: no frame of ours completes it.
      endOfTurnFrameMs: null,
      endOfTurnMs: round(item.turnEnd?.endOfTurnMs),
      asrFinalMs: null,
      // One model does all three steps: its first audio is its first token and first byte.
      llmFirstTokenMs: round(item.firstAudioMs),
      ttsFirstByteMs: round(item.firstAudioMs),
      firstFrameSentMs: round(item.firstAudioMs),
      firstMarkEchoedMs: round(item.firstMarkEchoedMs),
      interruptedAtMs: interrupted ? CallClock.round(this.clock.nowMs()) : null,
    });
  }
}
