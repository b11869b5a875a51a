/**
 * The messages between the bench's main thread (the server: media rig, pipeline, recorders) and
 * the caller thread (the simulated Twilio callers), and the clock conversion between the two.
 *
 * The callers live in their own thread so that their garbage, timers and JSON/base64 work land on
 * another event loop and another heap, as Twilio's would: the server's loop is then measured with
 * only the server on it (the CPU is still shared, both threads are in this process).
 *
 * A call's script waits on the server twice per turn ("the agent finished reply N"); the server's
 * state is on main, so the caller asks (`await-latencies`) and main answers once the call's
 * recorder holds N latency records, or with the recorder's own timeout error.
 */

/**
 * Main answers every wait and request within its own timeout; the other side's timeouts add this
 * margin and only catch a thread that never answers.
 */
export const ANSWER_MARGIN_MS = 5000;

/**
 * How long main waits for a call's outcome before giving up on the caller thread: every step of the
 * script (connect, each utterance, each wait on a reply) is bounded by stepTimeoutMs, the hang-up by
 * hangupTimeoutMs; two steps per question and four more around them is a generous ceiling.
 */
export function callOutcomeTimeoutMs(turns: number, stepTimeoutMs: number, hangupTimeoutMs: number): number {
  return (2 * turns + 4) * (stepTimeoutMs + ANSWER_MARGIN_MS) + hangupTimeoutMs;
}

/** What a caller needs to place one call; the call is registered with the rig on main first. */
export interface CallRequest {
  callId: string;
  streamToken: string;
  mediaUrl: string;
  baseUrl: string;
  /** Picks the call's fixtures, so concurrent calls do not speak in lockstep. */
  callIndex: number;
  turns: number;
}

/** What the caller thread reports for a call; times are on the caller thread's clock. */
export interface CallerSideOutcome {
  callId: string;
  /** Caller-thread performance.now() when the barge-in's first frame was sent; undefined if it never was. */
  bargeInSpeechSentAtMs: number | undefined;
  error?: string;
}

/** The caller thread's own diagnostics for one run (its GC and event loop, which no longer stall main's). */
export interface CallerThreadFigures {
  gcPauses: number;
  gcTotalMs: number;
  gcMaxMs: number;
  eventLoopP99Ms: number;
  eventLoopMaxMs: number;
}

/** The two ways one thread can place its performance.now() origin; see clockOffsetMs. */
export interface ClockAnchor {
  /** performance.timeOrigin: Unix-time ms at which this thread's performance.now() was 0. */
  timeOriginMs: number;
  /** process.hrtime (one monotonic clock for every thread of the process) at performance.now() 0, in ms. */
  monotonicOriginMs: number;
}

export type MainToCaller =
  | { type: 'set-niceness'; requestId: number; niceness: number }
  | { type: 'call'; requestId: number; call: CallRequest }
  | { type: 'latencies-reached'; requestId: number }
  | { type: 'latencies-failed'; requestId: number; error: string }
  | { type: 'measure-start' }
  | { type: 'measure-stop'; requestId: number };

export type CallerToMain =
  | { type: 'ready'; clock: ClockAnchor }
  | { type: 'niceness-set'; requestId: number; error?: string }
  | { type: 'await-latencies'; requestId: number; callId: string; count: number; timeoutMs: number }
  | { type: 'call-done'; requestId: number; outcome: CallerSideOutcome }
  | { type: 'measured'; requestId: number; figures: CallerThreadFigures };

/** This thread's clock anchor (call on each side of the conversion). */
export function clockAnchor(): ClockAnchor {
  const monotonicNs = process.hrtime.bigint();
  const nowMs = performance.now();
  return { timeOriginMs: performance.timeOrigin, monotonicOriginMs: Number(monotonicNs) / 1e6 - nowMs };
}

/**
 * Milliseconds to add to a caller-thread performance.now() to get main's performance.now() for
 * the same instant. Each thread's performance.now() counts from its own start:
 *
 *   wall(t) = callerTimeOrigin + callerNow(t) = mainTimeOrigin + mainNow(t)
 *   => mainNow(t) = callerNow(t) + (callerTimeOrigin - mainTimeOrigin)
 *
 * Node documents timeOrigin as the process's start, and on Node 20 a worker thread's does equal
 * main's: the offset comes out 0 and performance.now() is one clock. The conversion is kept
 * anyway, as the figure must not silently depend on that: on a runtime that gives each thread its
 * own origin, the offset corrects it. `disagreementMs` is the same offset taken from the
 * process-wide monotonic clock (process.hrtime) instead; it should be a few microseconds (the two
 * clock reads of an anchor are not simultaneous), and shows if the two methods ever part.
 */
export function clockOffsetMs(caller: ClockAnchor, main: ClockAnchor): { offsetMs: number; disagreementMs: number } {
  const offsetMs = caller.timeOriginMs - main.timeOriginMs;
  const monotonicOffsetMs = caller.monotonicOriginMs - main.monotonicOriginMs;
  return { offsetMs, disagreementMs: Math.abs(offsetMs - monotonicOffsetMs) };
}

/** A caller-thread time on main's clock; undefined stays undefined (the utterance was never sent). */
export function toMainClock(callerMs: number | undefined, offsetMs: number): number | undefined {
  return callerMs === undefined ? undefined : callerMs + offsetMs;
}

/**
 * Requests sent over a port and answered by id, each bounded by its own timeout, all failed at
 * once when the other side goes away. Used by both threads.
 */
export class PendingReplies<T> {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: T) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();

  /** Registers a request; `send` posts it with the id. Rejects after `timeoutMs` with `timeoutMessage`. */
  request(send: (requestId: number) => void, timeoutMs: number, timeoutMessage: string): Promise<T> {
    const requestId = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(requestId);
        reject(new Error(timeoutMessage));
      }, timeoutMs);
      this.pending.set(requestId, { resolve, reject, timer });
      try {
        send(requestId);
      } catch (error) {
        this.settle(requestId, error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  /** Settles a request with a value, or an Error; an unknown or already settled id is ignored (it timed out). */
  settle(requestId: number, result: T | Error): void {
    const entry = this.pending.get(requestId);
    if (!entry) return;
    this.pending.delete(requestId);
    clearTimeout(entry.timer);
    if (result instanceof Error) entry.reject(result);
    else entry.resolve(result);
  }

  failAll(error: Error): void {
    for (const requestId of [...this.pending.keys()]) this.settle(requestId, error);
  }

  get size(): number {
    return this.pending.size;
  }
}
