import { Injectable } from '@nestjs/common';
import type { ComputeUsageEntry, ComputeUsageSink } from '@switchboard/inference';
import { NO_AI_USAGE, type MeasuredAiUsage } from '@switchboard/billing';
import { CallUsageMeter } from './call-usage-meter';

/**
 * The meters of the calls in progress, by callId. Engines are shared between calls, so each call's
 * engine observer and the inference scheduler (as the ComputeUsageSink) find a call's meter here
 * by the callId every engine request carries.
 */
@Injectable()
export class CallUsageRegistry implements ComputeUsageSink {
  private readonly meters = new Map<string, CallUsageMeter>();
  private dropped = 0;
  private readonly openedListeners: Array<() => void> = [];

  /** Idempotent: a second open returns the meter already counting. */
  open(callId: string): CallUsageMeter {
    let meter = this.meters.get(callId);
    if (meter === undefined) {
      meter = new CallUsageMeter();
      this.meters.set(callId, meter);
      for (const listener of this.openedListeners) listener();
    }
    return meter;
  }

  /** Calls metered here now: the calls in progress on this instance. */
  get openCalls(): number {
    return this.meters.size;
  }

  /** Called when a call's meter opens here (its media stream started): inference capacity counts it live from then on. */
  onCallOpened(listener: () => void): void {
    this.openedListeners.push(listener);
  }

  meterFor(callId: string): CallUsageMeter | undefined {
    return this.meters.get(callId);
  }

  /** The call's final usage; the meter is forgotten, so later usage for this call is not counted. */
  close(callId: string): MeasuredAiUsage {
    const meter = this.meters.get(callId);
    if (meter === undefined) return { ...NO_AI_USAGE };
    this.meters.delete(callId);
    return meter.snapshot();
  }

  /**
   * Runs inside the inference scheduler's batch loop, so it must not throw (nothing here can: a map
   * lookup and additions). An entry for an unknown call is a batch that finished after its call
   * ended: dropped, and counted so the gap is visible.
   */
  record(entry: ComputeUsageEntry): void {
    const meter = this.meters.get(entry.callId);
    if (meter === undefined) {
      this.dropped += 1;
      return;
    }
    meter.addCompute(entry.device, entry.seconds);
  }

  /** Compute entries that arrived for no open call (since start). */
  get droppedComputeEntries(): number {
    return this.dropped;
  }
}
