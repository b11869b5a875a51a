import type { VadFrame, VadListener } from './vad-frame';

/**
 * The listener side of a VadStream, shared by every implementation: delivery in the order the
 * listeners were added; a listener that throws hears its own error, or, without an onError, every
 * listener that has one does (so a failing consumer is never silent); the others still get the
 * frame. And the waiters of drained().
 */
export class VadListeners {
  private listeners: VadListener[] = [];
  private drainWaiters: Array<() => void> = [];

  add(listener: VadListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((entry) => entry !== listener);
    };
  }

  deliver(frame: VadFrame): void {
    for (const listener of this.listeners) {
      try {
        listener.onFrame(frame);
      } catch (error) {
        if (listener.onError) listener.onError(error);
        else this.fail(error);
      }
    }
  }

  fail(error: unknown): void {
    for (const listener of this.listeners) listener.onError?.(error);
  }

  /** A promise for the next time the stream is idle; `idle` now resolves it at once. */
  whenDrained(idle: boolean): Promise<void> {
    if (idle) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** The stream has run everything it was given. */
  drained(): void {
    if (this.drainWaiters.length === 0) return;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }

  clear(): void {
    this.listeners = [];
    this.drained();
  }
}

/** Pushes audio and resolves with the frames its chunks (and any still pending) produced: for tests and benchmarks. */
export async function pushAndCollect(stream: { push(pcm: Int16Array): void; listen(listener: VadListener): () => void; drained(): Promise<void> }, pcm: Int16Array): Promise<VadFrame[]> {
  const frames: VadFrame[] = [];
  let failure: unknown;
  const stop = stream.listen({ onFrame: (frame) => frames.push(frame), onError: (error) => (failure ??= error) });
  try {
    stream.push(pcm);
    await stream.drained();
  } finally {
    stop();
  }
  if (failure instanceof Error) throw failure;
  if (failure !== undefined) throw new Error('VAD chunk failed', { cause: failure });
  return frames;
}
