/** One caller utterance and how long the agent took to start answering it. */
export interface TurnLatency {
  /** ms since the stream started when the utterance's last speech frame was sent. */
  speechEndedAtMs: number;
  /** ms from that frame to the first outbound media frame received after it; null if none came. */
  replyLatencyMs: number | null;
}

export interface LatencySummary {
  /** First inbound media frame sent -> first outbound media frame received. */
  firstEchoMs: number | null;
  /** Last inbound speech frame -> first outbound media frame after it (the last turn's latency). */
  replyAfterSpeechMs: number | null;
  turns: TurnLatency[];
  framesSent: number;
  framesReceived: number;
  bytesSent: number;
  bytesReceived: number;
  /** Outbound audio the caller actually heard (cleared audio excluded). */
  bytesPlayed: number;
  /** Outbound audio thrown away by `clear` before it played. */
  bytesCleared: number;
  marksReceived: number;
  /** Marks echoed because their audio played. */
  marksEchoed: number;
  /** Marks echoed because a `clear` discarded their audio. */
  marksCleared: number;
  clears: number;
  dtmfSent: number;
  /** Protocol violations seen in server messages (details in CallResult.protocolErrors). */
  protocolErrors: number;
  /** Worst lateness of a paced inbound frame: a large value means this process, not the server, lagged. */
  maxSendLateMs: number;
  /** `start` sent -> socket closed (or now, for a live call). */
  durationMs: number;
}

/** Collects the timestamps behind LatencySummary; all times are monotonic ms (performance.now). */
export class CallLatencyTracker {
  framesSent = 0;
  framesReceived = 0;
  bytesSent = 0;
  bytesReceived = 0;
  marksReceived = 0;
  marksEchoed = 0;
  marksCleared = 0;
  clears = 0;
  dtmfSent = 0;
  private streamStartedAtMs: number | null = null;
  private firstMediaSentAtMs: number | null = null;
  private firstMediaReceivedAtMs: number | null = null;
  private readonly turns: { speechEndedAtMs: number; replyAtMs: number | null }[] = [];

  streamStarted(atMs: number): void {
    this.streamStartedAtMs = atMs;
  }

  mediaSent(bytes: number, atMs: number): void {
    this.framesSent += 1;
    this.bytesSent += bytes;
    this.firstMediaSentAtMs ??= atMs;
  }

  speechEnded(atMs: number): void {
    this.turns.push({ speechEndedAtMs: atMs, replyAtMs: null });
  }

  mediaReceived(bytes: number, atMs: number): void {
    this.framesReceived += 1;
    this.bytesReceived += bytes;
    this.firstMediaReceivedAtMs ??= atMs;
    for (const turn of this.turns) {
      if (turn.replyAtMs === null && atMs >= turn.speechEndedAtMs) turn.replyAtMs = atMs;
    }
  }

  summary(extra: {
    bytesPlayed: number;
    bytesCleared: number;
    protocolErrors: number;
    maxSendLateMs: number;
    endedAtMs: number;
  }): LatencySummary {
    const origin = this.streamStartedAtMs ?? extra.endedAtMs;
    const turns = this.turns.map((turn) => ({
      speechEndedAtMs: round(turn.speechEndedAtMs - origin),
      replyLatencyMs: turn.replyAtMs === null ? null : round(turn.replyAtMs - turn.speechEndedAtMs),
    }));
    return {
      firstEchoMs:
        this.firstMediaSentAtMs === null || this.firstMediaReceivedAtMs === null
          ? null
          : round(this.firstMediaReceivedAtMs - this.firstMediaSentAtMs),
      replyAfterSpeechMs: turns[turns.length - 1]?.replyLatencyMs ?? null,
      turns,
      framesSent: this.framesSent,
      framesReceived: this.framesReceived,
      bytesSent: this.bytesSent,
      bytesReceived: this.bytesReceived,
      bytesPlayed: extra.bytesPlayed,
      bytesCleared: extra.bytesCleared,
      marksReceived: this.marksReceived,
      marksEchoed: this.marksEchoed,
      marksCleared: this.marksCleared,
      clears: this.clears,
      dtmfSent: this.dtmfSent,
      protocolErrors: extra.protocolErrors,
      maxSendLateMs: round(extra.maxSendLateMs),
      durationMs: round(extra.endedAtMs - origin),
    };
  }
}

/** 0.1 ms resolution: enough for a report, stable enough to read. */
function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
