import type { ConversationRecorder, ToolInvocationRecord, TranscriptTurnRecord, TurnLatencyRecord } from '@switchboard/conversation';
import type { CallTrace } from './call-trace';

/**
 * Passes every record on to the call's recorder and reads the turn boundaries off them for the
 * call's trace: the records already say when the caller's speech ended, when a reply was played
 * out or cut and why, so the conversation runtime needs no tracer of its own. Only the shape of a
 * record reaches the trace (indexes, sources, times, reasons), never its text.
 */
export class TracingRecorder implements ConversationRecorder {
  constructor(
    private readonly inner: ConversationRecorder,
    private readonly trace: CallTrace,
  ) {}

  transcriptTurn(turn: TranscriptTurnRecord): void {
    this.inner.transcriptTurn(turn);
    guarded(() => {
      if (turn.role === 'user') this.trace.userTurn(turn.source, turn.startMs, turn.endMs);
      else this.trace.assistantTurn(turn.index, turn.source, turn.startMs, turn.interrupted);
    });
  }

  toolInvocation(invocation: ToolInvocationRecord): void {
    this.inner.toolInvocation(invocation);
  }

  turnLatency(latency: TurnLatencyRecord): void {
    this.inner.turnLatency(latency);
    guarded(() => this.trace.latency(latency.turnIndex, latency.endOfSpeechMs, latency.firstMarkEchoedMs, latency.interruptedAtMs));
  }

  event(type: string, payload?: Record<string, unknown>): void {
    this.inner.event(type, payload);
    guarded(() => this.onEvent(type, payload ?? {}));
  }

  flush(): Promise<void> {
    return this.inner.flush();
  }

  private onEvent(type: string, payload: Record<string, unknown>): void {
    switch (type) {
      case 'turn_ended': {
        const at = numberOr(payload['endOfSpeechMs'], payload['endOfTurnMs']);
        if (at !== undefined) this.trace.speechEnded(at);
        return;
      }
      case 'backchannel_ignored':
        return this.trace.notATurn();
      case 'empty_transcript':
        return this.trace.noTranscript();
      case 'asr_error':
        return this.trace.turnFailed('stt');
      case 'llm_error':
        return this.trace.turnFailed('llm');
      case 'tts_error':
        return this.trace.turnFailed('tts');
      case 'barge_in':
        return this.trace.bargeIn();
      case 'assistant_turn_cut': {
        const index = payload['index'];
        const why = payload['why'];
        if (typeof index === 'number' && typeof why === 'string') this.trace.replyCut(index, why);
        return;
      }
    }
  }
}

function numberOr(first: unknown, second: unknown): number | undefined {
  if (typeof first === 'number') return first;
  return typeof second === 'number' ? second : undefined;
}

/** A tracing fault must never reach the media path: the call goes on untraced. */
function guarded(work: () => void): void {
  try {
    work();
  } catch {
    // Nothing to do: the records themselves were passed on before.
  }
}
