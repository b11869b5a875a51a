import type { EngineTimings } from '../contracts/engine-timings';

interface TrackedResponse {
  /** When the turn that produced this response started: end of caller speech, or the explicit request. */
  startMs: number;
  firstAudioMs: number | undefined;
  cancelled: boolean;
}

/**
 * Cancelled responses whose ids are remembered after they finish, so fragments that straggle in
 * after `response.done` are still recognised and dropped. A few suffice: a call has one response
 * in flight at a time.
 */
const REMEMBERED_CANCELLED = 16;

/**
 * Follows a session's responses for two jobs: dropping what a cancelled response still sends
 * (audio already in flight when the caller barged in must never reach the phone) and timing each
 * response from the moment its turn started. Provider-neutral: engines feed it response ids and
 * turn events. Times are `performance.now()` milliseconds supplied by the caller.
 */
export class ResponseTracker {
  private readonly responses = new Map<string, TrackedResponse>();
  private turnStartMs: number | undefined;
  /** Responses requested (explicitly) but not yet announced by the server. */
  private requestedPending = 0;
  private cancelNextCreated = false;
  private activeId: string | undefined;

  /** The caller started talking: any earlier end-of-speech no longer starts the next response. */
  speechStarted(): void {
    this.turnStartMs = undefined;
  }

  /** The caller stopped talking: the response the server creates next is timed from now. */
  speechStopped(nowMs: number): void {
    this.turnStartMs = nowMs;
  }

  /** The client asked for a response (after a tool result, or a greeting). */
  requested(nowMs: number): void {
    this.turnStartMs = nowMs;
    this.requestedPending += 1;
  }

  /** The server announced a response (or one was first seen through its fragments). */
  created(id: string, nowMs: number): void {
    if (this.responses.has(id)) return;
    const cancelled = this.cancelNextCreated;
    this.cancelNextCreated = false;
    if (this.requestedPending > 0) this.requestedPending -= 1;
    this.responses.set(id, { startMs: this.turnStartMs ?? nowMs, firstAudioMs: undefined, cancelled });
    this.turnStartMs = undefined;
    this.activeId = cancelled ? undefined : id;
  }

  /** True when fragments of this response must be dropped. */
  isCancelled(id: string): boolean {
    return this.responses.get(id)?.cancelled === true;
  }

  /** Records the first audio of a response (creating its record if the server never announced it). */
  audioArrived(id: string, nowMs: number): void {
    if (!this.responses.has(id)) this.created(id, nowMs);
    const response = this.responses.get(id);
    if (response !== undefined && response.firstAudioMs === undefined) response.firstAudioMs = nowMs;
  }

  /**
   * Marks the response in progress as cancelled. Returns its id; '' when the response was
   * requested but not yet announced (the next one announced is the cancelled one); undefined when
   * nothing is in progress.
   */
  cancelActive(): string | undefined {
    if (this.activeId !== undefined) {
      const id = this.activeId;
      const response = this.responses.get(id);
      if (response !== undefined) response.cancelled = true;
      this.activeId = undefined;
      return id;
    }
    if (this.requestedPending > 0) {
      this.cancelNextCreated = true;
      return '';
    }
    return undefined;
  }

  /** The response finished (any status): its timings. */
  done(id: string, nowMs: number): EngineTimings {
    const response = this.responses.get(id);
    if (this.activeId === id) this.activeId = undefined;
    if (response === undefined) return { totalMs: 0 };
    if (!response.cancelled) this.responses.delete(id);
    this.forgetOldCancelled();
    return {
      ...(response.firstAudioMs === undefined ? {} : { firstResultMs: response.firstAudioMs - response.startMs }),
      totalMs: nowMs - response.startMs,
    };
  }

  private forgetOldCancelled(): void {
    if (this.responses.size <= REMEMBERED_CANCELLED) return;
    for (const [id, response] of this.responses) {
      if (this.responses.size <= REMEMBERED_CANCELLED) return;
      if (response.cancelled && id !== this.activeId) this.responses.delete(id);
    }
  }
}
