/** Messages between FliteWorkerPool (main thread) and flite.worker (one synthesis at a time). */

export interface FliteJobMessage {
  id: number;
  text: string;
  /** flite's own voice name (slt, rms, awb, kal16). */
  voiceArgument: string;
  durationStretch: number;
}

export type FliteWorkerMessage =
  | { type: 'ready' }
  | { type: 'done'; id: number; wav: Uint8Array; runMs: number }
  | { type: 'failed'; id: number; message: string };

/** Asks an idle worker to exit by itself (closing its port). */
export interface FliteShutdownMessage {
  type: 'shutdown';
}
