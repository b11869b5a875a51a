import type { ConversationRecorder, ToolInvocationRecord, TranscriptTurnRecord, TurnLatencyRecord } from '@switchboard/conversation';
import { mergeLatency } from '../call-runtime/records/conversation-record-buffer';

/** Turns whose waterfall is still being reported (an agent has one or two at a time), and turns already settled. */
const MAX_OPEN_TURNS = 16;
const MAX_SETTLED_TURNS = 64;

/**
 * Passes every record on to the call's recorder and, once a reply's waterfall is complete (its first
 * mark came back: the caller heard it), hands the whole waterfall to `onHeard` for the metrics. The
 * runtime reports a waterfall in pieces as its marks happen, and the recorder forgets what it has
 * stored, so the pieces are merged here. A reply cut before it was heard is not observed.
 */
export class WaterfallObservingRecorder implements ConversationRecorder {
  private readonly open = new Map<number, TurnLatencyRecord>();
  /** Turns observed or cut: a later piece of them (a mark after the cut) is not a new waterfall. */
  private readonly settled = new Set<number>();

  constructor(
    private readonly inner: ConversationRecorder,
    private readonly onHeard: (waterfall: TurnLatencyRecord) => void,
  ) {}

  transcriptTurn(turn: TranscriptTurnRecord): void {
    this.inner.transcriptTurn(turn);
  }

  toolInvocation(invocation: ToolInvocationRecord): void {
    this.inner.toolInvocation(invocation);
  }

  event(type: string, payload?: Record<string, unknown>): void {
    this.inner.event(type, payload);
  }

  flush(): Promise<void> {
    return this.inner.flush();
  }

  turnLatency(latency: TurnLatencyRecord): void {
    this.inner.turnLatency(latency);
    if (this.settled.has(latency.turnIndex)) return;
    const earlier = this.open.get(latency.turnIndex);
    const merged = earlier ? mergeLatency(earlier, latency) : { ...latency };
    if (merged.firstMarkEchoedMs !== null || merged.interruptedAtMs !== null) {
      this.open.delete(latency.turnIndex);
      this.settled.add(latency.turnIndex);
      if (this.settled.size > MAX_SETTLED_TURNS) this.settled.delete(this.settled.values().next().value as number);
      if (merged.firstMarkEchoedMs !== null) this.onHeard(merged);
      return;
    }
    this.open.set(latency.turnIndex, merged);
    if (this.open.size > MAX_OPEN_TURNS) this.open.delete(this.open.keys().next().value as number);
  }
}
