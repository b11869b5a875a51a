/**
 * The bench's arithmetic, free of I/O: one reply's voice-to-voice time split into the end-of-turn
 * wait, the engines' delays and what is left (the platform's overhead), and a barge-in's time to
 * `clear` minus the detection time.
 *
 *   voiceToVoice     = firstFrameSentMs - endOfSpeechMs   (last speech frame in -> first reply frame out)
 *   endOfTurnWait    = decisionFrameMs - endOfSpeechMs    (until the frame that completed the silence arrived)
 *   engineDelays     = ASR final + LLM first token + TTS first byte, as the fakes measured them
 *   platformOverhead = voiceToVoice - endOfTurnWait - engineDelays
 *
 * The overhead is further split at the session's own milestones, so a missed target says where.
 */
import type { TranscriptTurnRecord, TurnLatencyRecord } from '@switchboard/conversation';
import { questionNumberIn, type EngineDelays } from './engine-delay-log';

/** The payload of the session's `turn_ended` call event (call-clock ms). */
export interface TurnEndedTimes {
  endOfSpeechMs: number | null;
  decisionFrameMs: number | null;
  endOfTurnMs: number;
}

/** Where the platform's share of one reply went (each step net of the engine delay inside it). */
export interface OverheadStages {
  /** Decision frame arrived -> the session handled the end of turn: VAD inference (batching, worker) and turn detection. */
  vadAndTurnMs: number;
  /** End of turn -> transcript in hand, minus the ASR delay. */
  asrHandOffMs: number;
  /** Transcript -> first token in hand, minus the LLM delay. */
  llmHandOffMs: number;
  /** First token -> first audio in hand, minus the TTS delay. */
  ttsHandOffMs: number;
  /** First audio -> first frame handed to the socket: resampling, mu-law, framing, JSON. */
  playoutMs: number;
}

export interface TurnBreakdown {
  callId: string;
  turnIndex: number;
  question: number;
  /** The VAD stage on the call clock: the decision frame arrived, the session handled the end of turn. */
  decisionFrameMs: number;
  endOfTurnMs: number;
  voiceToVoiceMs: number;
  endOfTurnWaitMs: number;
  engines: EngineDelays;
  engineDelaysMs: number;
  engineDelaysNominalMs: number;
  platformOverheadMs: number;
  /** With the scripted delays subtracted instead: includes how late the engines' timers fired. */
  platformOverheadNominalMs: number;
  stages: OverheadStages;
}

export interface CallRecords {
  callId: string;
  latencies: readonly TurnLatencyRecord[];
  transcript: readonly TranscriptTurnRecord[];
  events: readonly { type: string; payload: Record<string, unknown> }[];
}

export function sumDelays(delays: EngineDelays): number {
  return delays.asrMs + delays.llmFirstTokenMs + delays.ttsFirstByteMs;
}

/** One reply's split; every input is on one clock (the call clock for the milestones). */
export function breakDownTurn(
  milestones: { endOfSpeechMs: number; decisionFrameMs: number; endOfTurnMs: number; asrFinalMs: number; llmFirstTokenMs: number; ttsFirstByteMs: number; firstFrameSentMs: number },
  actual: EngineDelays,
  nominal: EngineDelays,
): Omit<TurnBreakdown, 'callId' | 'turnIndex' | 'question' | 'decisionFrameMs' | 'endOfTurnMs'> {
  const voiceToVoiceMs = milestones.firstFrameSentMs - milestones.endOfSpeechMs;
  const endOfTurnWaitMs = milestones.decisionFrameMs - milestones.endOfSpeechMs;
  const engineDelaysMs = sumDelays(actual);
  const engineDelaysNominalMs = sumDelays(nominal);
  return {
    voiceToVoiceMs,
    endOfTurnWaitMs,
    engines: actual,
    engineDelaysMs,
    engineDelaysNominalMs,
    platformOverheadMs: voiceToVoiceMs - endOfTurnWaitMs - engineDelaysMs,
    platformOverheadNominalMs: voiceToVoiceMs - endOfTurnWaitMs - engineDelaysNominalMs,
    stages: {
      vadAndTurnMs: milestones.endOfTurnMs - milestones.decisionFrameMs,
      asrHandOffMs: milestones.asrFinalMs - milestones.endOfTurnMs - actual.asrMs,
      llmHandOffMs: milestones.llmFirstTokenMs - milestones.asrFinalMs - actual.llmFirstTokenMs,
      ttsHandOffMs: milestones.ttsFirstByteMs - milestones.llmFirstTokenMs - actual.ttsFirstByteMs,
      playoutMs: milestones.firstFrameSentMs - milestones.ttsFirstByteMs,
    },
  };
}

/**
 * Every reply of a call that has a latency record, joined with its `turn_ended` event (same
 * endOfSpeechMs) and its engine delays (the question number in the user turn before it).
 * Replies that cannot be joined are listed with the reason, never silently dropped.
 */
export function breakDownCall(
  records: CallRecords,
  delaysFor: (question: number) => EngineDelays | undefined,
  nominal: EngineDelays,
): { turns: TurnBreakdown[]; unmatched: string[] } {
  const turns: TurnBreakdown[] = [];
  const unmatched: string[] = [];
  const turnEnds = records.events.filter((event) => event.type === 'turn_ended').map((event) => event.payload as unknown as TurnEndedTimes);
  for (const latency of records.latencies) {
    const label = `call ${records.callId} turn ${latency.turnIndex}`;
    const { endOfSpeechMs, endOfTurnMs, asrFinalMs, llmFirstTokenMs, ttsFirstByteMs, firstFrameSentMs } = latency;
    if (endOfSpeechMs === null || endOfTurnMs === null || asrFinalMs === null || llmFirstTokenMs === null || ttsFirstByteMs === null || firstFrameSentMs === null) {
      unmatched.push(`${label}: a milestone is missing from its latency record`);
      continue;
    }
    const decisionFrameMs = turnEnds.find((end) => end.endOfSpeechMs === endOfSpeechMs)?.decisionFrameMs;
    if (decisionFrameMs === undefined || decisionFrameMs === null) {
      unmatched.push(`${label}: no turn_ended event with endOfSpeechMs ${endOfSpeechMs}`);
      continue;
    }
    const userTurn = [...records.transcript].reverse().find((turn) => turn.role === 'user' && turn.index < latency.turnIndex);
    const question = userTurn ? questionNumberIn(userTurn.text) : undefined;
    const delays = question === undefined ? undefined : delaysFor(question);
    if (question === undefined || !delays) {
      unmatched.push(`${label}: no engine delays for the user turn before it (${userTurn ? JSON.stringify(userTurn.text) : 'none'})`);
      continue;
    }
    const split = breakDownTurn({ endOfSpeechMs, decisionFrameMs, endOfTurnMs, asrFinalMs, llmFirstTokenMs, ttsFirstByteMs, firstFrameSentMs }, delays, nominal);
    turns.push({ callId: records.callId, turnIndex: latency.turnIndex, question, decisionFrameMs, endOfTurnMs, ...split });
  }
  return { turns, unmatched };
}

export interface BargeInSample {
  callId: string;
  /** First frame of the caller's speech sent -> `clear` sent (same process, performance.now()). */
  latencyMs: number;
  /** latencyMs - the detection time (interruptions.minSpeechMs). */
  overheadMs: number;
  /**
   * The platform's share: the frame that completed minSpeechMs of speech arrived -> `clear` sent
   * (VAD inference, the interruption detector, the send), from the session's `barge_in` event.
   * The rest of latencyMs is the audio itself: VAD chunks of 32 ms, frames of 20 ms, the way in.
   */
  decisionToClearMs: number | null;
}

/** The payload of the session's `barge_in` call event (call-clock ms). */
export interface BargeInTimes {
  decisionFrameMs: number | null;
  clearedAtMs: number;
}

/** The first `clear` at or after the caller's speech began; undefined when none went out. */
export function bargeInSample(
  callId: string,
  speechFirstFrameSentAtMs: number,
  clearsSentAtMs: readonly number[],
  detectionMs: number,
  event?: BargeInTimes,
): BargeInSample | undefined {
  const clearAt = clearsSentAtMs.find((at) => at >= speechFirstFrameSentAtMs);
  if (clearAt === undefined) return undefined;
  const latencyMs = clearAt - speechFirstFrameSentAtMs;
  const decisionToClearMs = event && event.decisionFrameMs !== null ? event.clearedAtMs - event.decisionFrameMs : null;
  return { callId, latencyMs, overheadMs: latencyMs - detectionMs, decisionToClearMs };
}
