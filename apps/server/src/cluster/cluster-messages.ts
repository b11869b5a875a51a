/*
 * What the cluster primary and its workers say to each other over the IPC channel node:cluster
 * opens. Workers never talk to each other directly: the primary relays.
 */

/** Environment variable the primary sets for its workers: the embedded database it serves. */
export const SHARED_EMBEDDED_DATABASE_ENV = 'SWITCHBOARD_SHARED_EMBEDDED_DATABASE_URL';

/** A worker asks for every process's metrics (a /metrics scrape lands on one worker only). */
export interface MetricsRequest {
  type: 'switchboard:metrics-request';
  requestId: number;
}

export interface MetricsResponse {
  type: 'switchboard:metrics-response';
  requestId: number;
  /** Prometheus text of all workers, each series labelled with its `worker`; or why not. */
  text?: string;
  error?: string;
}

/** A note for whichever worker carries a call (e.g. a late answering-machine verdict). */
export interface CallNote {
  type: 'switchboard:call-note';
  callId: string;
  answeredBy: string;
}

/** Every worker of the start listens (sent once, to the workers then running). */
export interface ClusterListening {
  type: 'switchboard:cluster-listening';
}

export type WorkerToPrimary = MetricsRequest | CallNote;
export type PrimaryToWorker = MetricsResponse | CallNote | ClusterListening;

export function isSwitchboardMessage(message: unknown): message is WorkerToPrimary | PrimaryToWorker {
  const type = (message as { type?: unknown } | null)?.type;
  return typeof type === 'string' && type.startsWith('switchboard:');
}
