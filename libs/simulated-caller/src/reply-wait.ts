import type { EventEmitter } from 'node:events';
import type { PlaybackBuffer } from './playback-buffer';
import type { SimulatedTwilioCallEvents } from './simulated-call.options';
import type { ServerStreamMessage } from './twilio-stream-messages';

/** How long a caller waits for the agent's reply (`npm run call`'s --reply-tail-ms and --reply-timeout-ms). */
export interface ReplyWaitOptions {
  /** Silence heard after the reply's last audible audio before it counts as over (default 2000). */
  tailMs?: number;
  /** The longest wait, from when waiting starts, for the reply to begin and end (default 30000). */
  timeoutMs?: number;
}

export const DEFAULT_REPLY_TAIL_MS = 2000;
export const DEFAULT_REPLY_TIMEOUT_MS = 30_000;

export interface ReplyWaitResult {
  /** `ended`: heard in full, then `tailMs` of silence; `timed_out`: still going (or never begun) at `timeoutMs`; `call_closed`: the server ended the call. */
  outcome: 'ended' | 'timed_out' | 'call_closed';
  /** Audible agent audio arrived after the caller's speech: there was a reply. */
  replyHeard: boolean;
  waitedMs: number;
}

/** What the wait watches: the call's events, and its playback buffer (what the caller hears, and when). */
export interface ReplyWatchTarget {
  readonly events: EventEmitter<SimulatedTwilioCallEvents>;
  playback(): PlaybackBuffer | null;
  isClosed(): boolean;
}

/**
 * Waits for the agent's reply to what the caller said (their last audible audio was sent at
 * `afterMs`) to end, as a person on the phone would. The reply has begun once audible agent audio
 * arrives after that, and after the last `clear` (the agent cutting itself short because the caller
 * talked over it, a greeting say: its answer comes next). It is over once the caller's playback has
 * played its last audible byte and then `tailMs` more (marks sent with it have come back by then:
 * the playback echoes each once the audio before it has played) without new audible audio arriving.
 * Silence the agent sends (an echo of the line's silence) does not keep the call open. Timers are
 * set from the playback model and moved by each message, never polled; `timeoutMs` bounds the wait.
 */
export function waitForReplyEnd(target: ReplyWatchTarget, afterMs: number, options: ReplyWaitOptions = {}): Promise<ReplyWaitResult> {
  const tailMs = options.tailMs ?? DEFAULT_REPLY_TAIL_MS;
  const timeoutMs = options.timeoutMs ?? DEFAULT_REPLY_TIMEOUT_MS;
  const startedAtMs = performance.now();
  // A `clear` after the caller spoke is the agent stopping for them (barge-in): its answer is still to come.
  const replyHeard = (): boolean => {
    const playback = target.playback();
    return (playback?.lastAudibleArrivalMs ?? Number.NEGATIVE_INFINITY) > Math.max(afterMs, playback?.lastClearMs ?? Number.NEGATIVE_INFINITY);
  };
  const result = (outcome: ReplyWaitResult['outcome']): ReplyWaitResult => ({ outcome, replyHeard: replyHeard(), waitedMs: performance.now() - startedAtMs });
  if (target.isClosed()) return Promise.resolve(result('call_closed'));

  return new Promise((resolve) => {
    let tailTimer: ReturnType<typeof setTimeout> | undefined;
    const finish = (outcome: ReplyWaitResult['outcome']): void => {
      clearTimeout(tailTimer);
      clearTimeout(timeout);
      target.events.off('message', onMessage);
      target.events.off('close', onClose);
      resolve(result(outcome));
    };
    /** (Re)sets the end of the reply: the last audible audio's end on the playback timeline, plus the tail. */
    const arm = (): void => {
      const playback = target.playback();
      clearTimeout(tailTimer);
      if (!playback || !replyHeard()) return;
      tailTimer = setTimeout(() => finish('ended'), Math.max(0, playback.audibleUntilMs + tailMs - performance.now()));
    };
    // Audio and `clear` move where the audible audio ends; marks do not.
    const onMessage = (message: ServerStreamMessage): void => {
      if (message.event !== 'mark') arm();
    };
    const onClose = (): void => finish('call_closed');
    const timeout = setTimeout(() => finish('timed_out'), timeoutMs);
    target.events.on('message', onMessage);
    target.events.on('close', onClose);
    arm();
  });
}
