import type { TranscriptSource } from '../records/conversation-records';
import type { ResponseLedger } from './response-ledger';

/** How long the model gets to say a line (goodbye, transfer notice, filler) before the call moves on without it. */
export const CLOSING_WORDS_TIMEOUT_MS = 10_000;

/**
 * A line the session asked the model to say (greeting, idle prompt, filler, apology, closing
 * words) and what to do once the caller has heard it. It belongs to the first response seen after
 * the request (by its audio, tool call or done).
 */
export interface RequestedLine {
  readonly text: string;
  readonly source: TranscriptSource;
  /** Runs once the caller has heard the line; undefined once it ran (or for lines that end nothing). */
  then: (() => Promise<void>) | undefined;
  /** Resolves when the line's response is done generating, or the line was given up. */
  readonly generated: Promise<void>;
}

interface TrackedLine extends RequestedLine {
  fromSeq: number;
  responseId: string | undefined;
  fallback: NodeJS.Timeout | undefined;
  markGenerated: () => void;
}

/** The one line at a time the session is waiting for, matched to its response. */
export class RequestedLines {
  private line: TrackedLine | undefined;

  constructor(
    private readonly ledger: ResponseLedger,
    private readonly hooks: {
      /** The model never said the line in time; `then` (a hang-up) still runs after this. */
      onTimeout(line: RequestedLine): void;
      /** False once the call is over: nothing more runs. */
      isOpen(): boolean;
    },
  ) {}

  /** The line being waited for, if any. */
  get pending(): RequestedLine | undefined {
    return this.line;
  }

  /**
   * A line about to be asked for; it replaces the one waited for so far. `timeoutMs` bounds the
   * wait for the caller to have heard it (a long line, a voicemail, needs longer than a goodbye).
   */
  expect(text: string, source: TranscriptSource, then?: () => Promise<void>, timeoutMs = CLOSING_WORDS_TIMEOUT_MS): RequestedLine {
    if (this.line) {
      clearTimeout(this.line.fallback);
      this.line.markGenerated();
    }
    let markGenerated!: () => void;
    const generated = new Promise<void>((resolve) => (markGenerated = resolve));
    const line: TrackedLine = { text, source, then, generated, markGenerated, fromSeq: this.ledger.next, responseId: undefined, fallback: undefined };
    // Should the model ignore the request, the line must not label a later answer as its own, and
    // what was to follow it (a hang-up) still happens.
    line.fallback = setTimeout(() => {
      this.hooks.onTimeout(line);
      void this.finish(line);
    }, timeoutMs);
    this.line = line;
    return line;
  }

  /** The requested line this response says, if it is the first response seen since the request. */
  lineFor(responseId: string): RequestedLine | undefined {
    const line = this.line;
    if (!line) return undefined;
    if (line.responseId === undefined && this.ledger.seqOf(responseId) >= line.fromSeq) line.responseId = responseId;
    return line.responseId === responseId ? line : undefined;
  }

  /** The line's response is done generating (its audio may still be playing). */
  generatedBy(responseId: string): void {
    if (this.line?.responseId === responseId) this.line.markGenerated();
  }

  /** The caller heard the line (or it was given up): stop waiting, and run what was to follow it. */
  async finish(line: RequestedLine): Promise<void> {
    const tracked = line as TrackedLine;
    if (this.line === tracked) this.line = undefined;
    clearTimeout(tracked.fallback);
    tracked.markGenerated();
    const then = tracked.then;
    tracked.then = undefined;
    if (then && this.hooks.isOpen()) await then();
  }

  close(): void {
    if (!this.line) return;
    clearTimeout(this.line.fallback);
    this.line.markGenerated();
    this.line = undefined;
  }
}
