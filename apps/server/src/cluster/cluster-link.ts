import cluster from 'node:cluster';
import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { isSwitchboardMessage, type CallNote, type MetricsRequest, type PrimaryToWorker } from './cluster-messages';

/** A metrics request the primary does not answer in this long fails (prom-client's own bound is 5 s). */
const METRICS_TIMEOUT_MS = 6000;

/**
 * This worker's line to the cluster primary (see cluster-primary.ts). Outside a cluster
 * (WORKERS=1, tests) it reports `inCluster: false` and every method is a no-op.
 */
@Injectable()
export class ClusterLink implements OnModuleDestroy {
  readonly inCluster = cluster.isWorker && typeof process.send === 'function';
  /** This worker's number (1-based, as node:cluster counts), or undefined outside a cluster. */
  readonly workerId = cluster.isWorker ? cluster.worker?.id : undefined;
  private readonly callNoteHandlers: Array<(note: CallNote) => void> = [];
  private readonly pendingMetrics = new Map<number, (response: { text?: string; error?: string }) => void>();
  private nextRequestId = 0;
  private clusterListening = false;
  private readonly listeningHandlers: Array<() => void> = [];
  private readonly onMessage = (message: unknown): void => {
    if (!isSwitchboardMessage(message)) return;
    const received = message as PrimaryToWorker;
    if (received.type === 'switchboard:call-note') for (const handler of this.callNoteHandlers) handler(received);
    else if (received.type === 'switchboard:metrics-response') this.pendingMetrics.get(received.requestId)?.(received);
    else if (received.type === 'switchboard:cluster-listening') this.markClusterListening();
  };

  constructor() {
    if (this.inCluster) process.on('message', this.onMessage);
  }

  onModuleDestroy(): void {
    process.off('message', this.onMessage);
  }

  /** Tells every other worker about a call this one does not carry. */
  broadcastCallNote(note: Omit<CallNote, 'type'>): void {
    if (this.inCluster) process.send?.({ type: 'switchboard:call-note', ...note } satisfies CallNote);
  }

  onCallNote(handler: (note: CallNote) => void): void {
    this.callNoteHandlers.push(handler);
  }

  /**
   * Runs `handler` once every worker of the start listens, as the primary says (also when it said
   * so before this call); outside a cluster at once. A worker started later to replace one that
   * died is never told.
   */
  whenClusterListening(handler: () => void): void {
    if (!this.inCluster || this.clusterListening) handler();
    else this.listeningHandlers.push(handler);
  }

  private markClusterListening(): void {
    this.clusterListening = true;
    for (const handler of this.listeningHandlers.splice(0)) handler();
  }

  /** Every worker's metrics in Prometheus text, each series labelled with its worker. */
  clusterMetrics(): Promise<string> {
    const requestId = this.nextRequestId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => settle({ error: `the cluster primary did not answer within ${METRICS_TIMEOUT_MS} ms` }), METRICS_TIMEOUT_MS);
      const settle = (response: { text?: string; error?: string }) => {
        clearTimeout(timer);
        this.pendingMetrics.delete(requestId);
        if (response.text !== undefined) resolve(response.text);
        else reject(new Error(response.error ?? 'no metrics'));
      };
      this.pendingMetrics.set(requestId, settle);
      process.send?.({ type: 'switchboard:metrics-request', requestId } satisfies MetricsRequest);
    });
  }
}
