/**
 * Main's side of the caller threads: registers each call with the media rig (as the inbound
 * webhook would), hands it to a caller thread, answers the thread's waits on the call's recorder,
 * and turns what comes back into the call's outcome on main's clock.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Worker } from 'node:worker_threads';
import { launchWorkerBeside } from '@switchboard/inference';
import {
  callOutcomeTimeoutMs,
  clockAnchor,
  clockOffsetMs,
  PendingReplies,
  toMainClock,
  ANSWER_MARGIN_MS,
  type CallerSideOutcome,
  type CallerThreadFigures,
  type CallerToMain,
  type CallRequest,
  type MainToCaller,
} from './caller-protocol';
import { BENCH_AGENT_CONFIG, STEP_TIMEOUT_MS } from './latency-bench-settings';
import type { BenchCallLedger, MediaServerRig } from './media-server-rig';
import { HANGUP_TIMEOUT_MS } from './scripted-call';

export interface ScriptedCallOutcome {
  callId: string;
  ledger: BenchCallLedger;
  /** Main's performance.now() when the barge-in utterance's first frame was sent (converted from the caller thread's clock); undefined if it never was. */
  bargeInSpeechSentAtMs: number | undefined;
  /** The call's end reason as finalised by the server, or undefined when it was not finalised in time. */
  endReason: string | undefined;
  error?: string;
}

/** Starting a thread compiles the callers' sources with ts-node first: seconds, not minutes. */
const START_TIMEOUT_MS = 60_000;
const TERMINATE_TIMEOUT_MS = 5000;
const WORKER_ENTRY = 'caller-worker-entry';
/** The lowest priority a Linux nice value gives. */
export const MAX_NICENESS = 19;

class CallerThread {
  private readonly calls = new PendingReplies<CallerSideOutcome>();
  private readonly measurements = new PendingReplies<CallerThreadFigures>();
  private readonly nicenessReplies = new PendingReplies<void>();
  private readonly ledgers = new Map<string, BenchCallLedger>();
  private gone: Error | undefined;

  private constructor(
    private readonly worker: Worker,
    /** Add to a caller-thread performance.now() to get main's. */
    readonly clockOffsetMs: number,
    /** How far the monotonic-clock check disagrees with clockOffsetMs (a stepped wall clock shows here). */
    readonly clockDisagreementMs: number,
  ) {
    worker.on('message', (message: CallerToMain) => this.onMessage(message));
    worker.on('error', (error) => this.fail(new Error(`caller thread failed: ${error.message}`)));
    worker.on('exit', (code) => this.fail(new Error(`caller thread exited (code ${code})`)));
  }

  static async start(): Promise<CallerThread> {
    const worker = launchWorkerBeside(__filename, WORKER_ENTRY);
    const mainClock = clockAnchor();
    try {
      const ready = await new Promise<Extract<CallerToMain, { type: 'ready' }>>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the caller thread did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
        const settle = (): void => {
          clearTimeout(timer);
          worker.off('message', onMessage).off('error', onError).off('exit', onExit);
        };
        const onMessage = (message: CallerToMain): void => {
          if (message.type !== 'ready') return;
          settle();
          resolve(message);
        };
        const onError = (error: Error): void => {
          settle();
          reject(new Error(`the caller thread failed to start: ${error.message}`));
        };
        const onExit = (code: number): void => {
          settle();
          reject(new Error(`the caller thread exited (code ${code}) before it was ready`));
        };
        worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      });
      const clock = clockOffsetMs(ready.clock, mainClock);
      return new CallerThread(worker, clock.offsetMs, clock.disagreementMs);
    } catch (error) {
      await terminate(worker);
      throw error;
    }
  }

  /** Places one call from this thread; never rejects: a call that could not run has an `error`. */
  async runCall(rig: MediaServerRig, callIndex: number, turns: number): Promise<ScriptedCallOutcome> {
    const callId = randomUUID();
    const streamToken = randomBytes(24).toString('base64url');
    const ledger = rig.register(callId, streamToken, BENCH_AGENT_CONFIG);
    const call: CallRequest = { callId, streamToken, mediaUrl: rig.mediaUrl(callId), baseUrl: rig.baseUrl, callIndex, turns };
    this.ledgers.set(callId, ledger);
    let callerSide: CallerSideOutcome;
    try {
      callerSide = await this.calls.request(
        (requestId) => this.post({ type: 'call', requestId, call }),
        callOutcomeTimeoutMs(turns, STEP_TIMEOUT_MS, HANGUP_TIMEOUT_MS),
        `the caller thread did not report call ${callId} in time`,
      );
    } catch (error) {
      callerSide = { callId, bargeInSpeechSentAtMs: undefined, error: error instanceof Error ? error.message : String(error) };
    } finally {
      this.ledgers.delete(callId);
    }
    // The caller has hung up (or given up); the server finalises the call on its own.
    const endReason = await Promise.race([ledger.finalised, delay(HANGUP_TIMEOUT_MS).then(() => undefined)]);
    return {
      callId,
      ledger,
      bargeInSpeechSentAtMs: toMainClock(callerSide.bargeInSpeechSentAtMs, this.clockOffsetMs),
      endReason,
      ...(callerSide.error === undefined ? {} : { error: callerSide.error }),
    };
  }

  /** Lowers this caller thread's CPU priority (Linux nice value, 0-19); see CallerThreads.start. */
  setNiceness(niceness: number): Promise<void> {
    return this.nicenessReplies.request((requestId) => this.post({ type: 'set-niceness', requestId, niceness }), ANSWER_MARGIN_MS, 'the caller thread did not confirm its niceness');
  }

  measureStart(): void {
    this.post({ type: 'measure-start' });
  }

  measureStop(): Promise<CallerThreadFigures> {
    return this.measurements.request((requestId) => this.post({ type: 'measure-stop', requestId }), ANSWER_MARGIN_MS, 'the caller thread did not send its figures');
  }

  async close(): Promise<void> {
    this.fail(new Error('the caller thread was closed'));
    await terminate(this.worker);
  }

  private onMessage(message: CallerToMain): void {
    switch (message.type) {
      case 'await-latencies':
        this.answerLatencyWait(message.requestId, message.callId, message.count, message.timeoutMs);
        return;
      case 'call-done':
        this.calls.settle(message.requestId, message.outcome);
        return;
      case 'measured':
        this.measurements.settle(message.requestId, message.figures);
        return;
      case 'niceness-set':
        this.nicenessReplies.settle(message.requestId, message.error === undefined ? undefined : new Error(message.error));
        return;
      case 'ready':
        return;
    }
  }

  /** Answers once the call's recorder holds `count` latency records, or with the recorder's timeout. */
  private answerLatencyWait(requestId: number, callId: string, count: number, timeoutMs: number): void {
    const ledger = this.ledgers.get(callId);
    if (!ledger) {
      this.answer({ type: 'latencies-failed', requestId, error: `no call ${callId} is running on this thread` });
      return;
    }
    ledger.recorder.whenLatencies(count, timeoutMs).then(
      () => this.answer({ type: 'latencies-reached', requestId }),
      (error: unknown) => this.answer({ type: 'latencies-failed', requestId, error: error instanceof Error ? error.message : String(error) }),
    );
  }

  private post(message: MainToCaller): void {
    if (this.gone) throw this.gone;
    this.worker.postMessage(message);
  }

  /** An answer to a thread that has gone is dropped: nobody is left waiting for it. */
  private answer(message: MainToCaller): void {
    if (!this.gone) this.worker.postMessage(message);
  }

  private fail(error: Error): void {
    this.gone ??= error;
    this.calls.failAll(error);
    this.measurements.failAll(error);
    this.nicenessReplies.failAll(error);
  }
}

/** The callers of a run, spread over `count` threads (calls go round-robin by index). */
export class CallerThreads {
  private constructor(
    private readonly threads: readonly CallerThread[],
    readonly niceness: number,
  ) {}

  /**
   * Starts `count` caller threads. A `niceness` above 0 lowers their CPU priority (Linux only: there
   * a thread's nice value is its own), so on a busy machine the server's threads get the cores
   * first and the callers take what is left, still on the same cores, as Twilio's own machines
   * would not compete with the server at all. 0 (the default) competes as an equal.
   */
  static async start(count: number, options: { niceness?: number } = {}): Promise<CallerThreads> {
    const niceness = options.niceness ?? 0;
    if (!Number.isInteger(niceness) || niceness < 0 || niceness > MAX_NICENESS) throw new RangeError(`caller niceness must be a whole number from 0 to ${MAX_NICENESS}, got ${niceness}`);
    if (niceness > 0 && process.platform !== 'linux') throw new Error(`a caller niceness needs Linux, where a thread's priority is its own (this is ${process.platform})`);
    const started = await Promise.allSettled(Array.from({ length: count }, () => CallerThread.start()));
    const threads = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failure = started.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    try {
      if (failure) throw failure.reason;
      if (niceness > 0) await Promise.all(threads.map((thread) => thread.setNiceness(niceness)));
    } catch (error) {
      await Promise.all(threads.map((thread) => thread.close()));
      throw error;
    }
    return new CallerThreads(threads, niceness);
  }

  get count(): number {
    return this.threads.length;
  }

  /** Each thread's clock offset (caller -> main, ms) and its monotonic-clock disagreement. */
  get clocks(): { offsetMs: number; disagreementMs: number }[] {
    return this.threads.map((thread) => ({ offsetMs: thread.clockOffsetMs, disagreementMs: thread.clockDisagreementMs }));
  }

  runCall(rig: MediaServerRig, callIndex: number, turns: number): Promise<ScriptedCallOutcome> {
    return this.threads[callIndex % this.threads.length]!.runCall(rig, callIndex, turns);
  }

  measureStart(): void {
    for (const thread of this.threads) thread.measureStart();
  }

  /** Every thread's figures since measureStart; a thread that cannot say is left out. */
  async measureStop(): Promise<CallerThreadFigures[]> {
    const figures = await Promise.allSettled(this.threads.map((thread) => thread.measureStop()));
    return figures.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((thread) => thread.close()));
  }
}

/** Ends a caller thread; it runs only JavaScript (no native work to wait for), so terminate() is safe. */
async function terminate(worker: Worker): Promise<void> {
  await Promise.race([worker.terminate().catch(() => undefined), delay(TERMINATE_TIMEOUT_MS)]);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
