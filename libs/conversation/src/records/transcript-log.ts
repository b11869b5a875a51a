import { CallClock } from '../call/call-clock';
import type { ConversationRecorder, TranscriptRole, TranscriptSource, TurnLatencyRecord } from './conversation-records';

/** Call-clock times of one reply's steps (undefined: the step did not happen). */
export type LatencySteps = { [K in Exclude<keyof TurnLatencyRecord, 'turnIndex'>]?: number | null };

/**
 * Numbers transcript turns in the order they end and writes them, and each reply's latency
 * waterfall, to the recorder with the rounding the records use (whole ms for turn offsets, 0.1 ms
 * for latency steps). Shared by the pipeline and realtime agents so their records read the same.
 */
export class TranscriptLog {
  private nextIndex: number;

  /** `firstIndex`: where numbering starts (a call taken back after a warm transfer goes on from its earlier turns). */
  constructor(
    private readonly recorder: ConversationRecorder,
    firstIndex = 0,
  ) {
    this.nextIndex = firstIndex;
  }

  /** Records a turn; `heardText` marks it as cut short (the caller heard only that). Returns its index. */
  turn(role: TranscriptRole, source: TranscriptSource, text: string, startMs: number, endMs: number, heardText?: string): number {
    const index = this.nextIndex++;
    const interrupted = heardText !== undefined;
    this.recorder.transcriptTurn({
      index,
      role,
      source,
      text,
      heardText: interrupted ? heardText : null,
      interrupted,
      startMs: Math.round(startMs),
      endMs: Math.round(Math.max(startMs, endMs)),
    });
    return index;
  }

  latency(turnIndex: number, steps: LatencySteps): void {
    const round = (value: number | null | undefined): number | null => (value === null || value === undefined ? null : CallClock.round(value));
    this.recorder.turnLatency({
      turnIndex,
      endOfSpeechMs: round(steps.endOfSpeechMs),
      endOfTurnFrameMs: round(steps.endOfTurnFrameMs),
      endOfTurnMs: round(steps.endOfTurnMs),
      asrFinalMs: round(steps.asrFinalMs),
      llmFirstTokenMs: round(steps.llmFirstTokenMs),
      ttsFirstByteMs: round(steps.ttsFirstByteMs),
      firstFrameSentMs: round(steps.firstFrameSentMs),
      firstMarkEchoedMs: round(steps.firstMarkEchoedMs),
      interruptedAtMs: round(steps.interruptedAtMs),
    });
  }
}
