/**
 * What every engine call reports, in milliseconds, so each turn's latency waterfall and the cost
 * ledger can be built from engine results alone.
 */
export interface EngineTimings {
  /** Time spent waiting for a batch slot or a worker (local engines). */
  queueWaitMs?: number;
  /** Model/server run time. */
  runMs?: number;
  /** First partial transcript, first LLM token, or first TTS audio byte, from the request start. */
  firstResultMs?: number;
  /** Request start to completion. */
  totalMs: number;
  /** Attempts made, including the successful one (remote engines retry). */
  attempts?: number;
}
