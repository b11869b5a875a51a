/**
 * What the fake engines actually waited, per call and per question. The fake ASR numbers each
 * call's questions ("question 3"); the fake LLM reads the number back from the user message it
 * answers; the call's next synthesis after that answer's first token is that answer's first
 * audio. So every reply's three engine delays are found by (callId, question), not by guessing
 * from times or orders.
 */
export interface EngineDelays {
  asrMs: number;
  llmFirstTokenMs: number;
  ttsFirstByteMs: number;
}

interface CallLog {
  questionsAsked: number;
  byQuestion: Map<number, Partial<EngineDelays>>;
  /** The answer whose first audio has not been synthesised yet. */
  awaitingFirstAudio: number | undefined;
}

export class EngineDelayLog {
  private readonly calls = new Map<string, CallLog>();

  /** The ASR is finishing a new utterance of `callId`: its question number. */
  nextQuestion(callId: string): number {
    const log = this.callLog(callId);
    log.questionsAsked += 1;
    return log.questionsAsked;
  }

  asrFinished(callId: string, question: number, actualMs: number): void {
    this.entry(callId, question).asrMs = actualMs;
  }

  llmFirstToken(callId: string, question: number, actualMs: number): void {
    this.entry(callId, question).llmFirstTokenMs = actualMs;
    this.callLog(callId).awaitingFirstAudio = question;
  }

  /** A synthesis of `callId` produced its first audio; it belongs to the answer waiting for one, if any. */
  ttsFirstByte(callId: string, actualMs: number): void {
    const log = this.callLog(callId);
    const question = log.awaitingFirstAudio;
    if (question === undefined) return;
    log.awaitingFirstAudio = undefined;
    this.entry(callId, question).ttsFirstByteMs = actualMs;
  }

  /** All three delays of the answer to `question`, or undefined when one is missing. */
  delaysFor(callId: string, question: number): EngineDelays | undefined {
    const entry = this.calls.get(callId)?.byQuestion.get(question);
    if (entry?.asrMs === undefined || entry.llmFirstTokenMs === undefined || entry.ttsFirstByteMs === undefined) return undefined;
    return { asrMs: entry.asrMs, llmFirstTokenMs: entry.llmFirstTokenMs, ttsFirstByteMs: entry.ttsFirstByteMs };
  }

  private callLog(callId: string): CallLog {
    let log = this.calls.get(callId);
    if (!log) {
      log = { questionsAsked: 0, byQuestion: new Map(), awaitingFirstAudio: undefined };
      this.calls.set(callId, log);
    }
    return log;
  }

  private entry(callId: string, question: number): Partial<EngineDelays> {
    const byQuestion = this.callLog(callId).byQuestion;
    let entry = byQuestion.get(question);
    if (!entry) {
      entry = {};
      byQuestion.set(question, entry);
    }
    return entry;
  }
}

/** How the fake ASR words question `n`, and how the fake LLM finds `n` again. */
export function questionText(question: number): string {
  return `I have question ${question} about my order.`;
}

export function questionNumberIn(text: string): number | undefined {
  const match = /\bquestion (\d+)\b/.exec(text);
  return match ? Number(match[1]) : undefined;
}
