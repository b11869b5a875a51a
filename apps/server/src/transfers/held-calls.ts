import type { MeasuredCallUsage } from '@switchboard/billing';
import type { StreamHandOff } from '../call-runtime/stream-hand-off';

/** A stream's usage waits this long for a call to resume on this process, then is dropped (and logged by the caller). */
const CARRIED_USAGE_TTL_MS = 30 * 60_000;

interface HeldCall {
  callId: string;
  handOff: StreamHandOff | undefined;
  timer: NodeJS.Timeout | undefined;
}

/**
 * The calls this process holds for a warm transfer, between the agent's stream ending and the
 * transfer's outcome: their heartbeat (a held call has no media stream, and the reconciler must
 * not take it for one nobody carries), the bound on how long the destination may take, and what
 * the agent's stream measured (the call's end, or its resumed stream, charges it).
 */
export class HeldCalls {
  private readonly byTransfer = new Map<string, HeldCall>();
  private readonly carried = new Map<string, { usage: MeasuredCallUsage; at: number }>();

  /** Ids of the calls held now, for the heartbeat. */
  callIds(): string[] {
    return [...new Set([...this.byTransfer.values()].map((held) => held.callId))];
  }

  hold(transferId: string, callId: string, handOff: StreamHandOff | undefined): void {
    this.byTransfer.set(transferId, { callId, handOff, timer: undefined });
    void handOff?.suspended.then((usage) => this.keepCarried(callId, usage));
  }

  /** Runs `onBound` after `ms` unless released first (replaces an earlier bound). */
  bound(transferId: string, ms: number, onBound: () => void): void {
    const held = this.byTransfer.get(transferId);
    if (!held) return;
    clearTimeout(held.timer);
    held.timer = setTimeout(onBound, ms);
    held.timer.unref();
  }

  /** The transfer is over here: no more heartbeat or bound. */
  release(transferId: string): void {
    const held = this.byTransfer.get(transferId);
    clearTimeout(held?.timer);
    this.byTransfer.delete(transferId);
  }

  /**
   * Waits (at most `waitMs`) for the agent's stream to have ended, so its records are flushed and
   * its usage measured before the call moves on. Nothing to wait for on another process.
   */
  async streamEnded(transferId: string, waitMs: number): Promise<void> {
    const handOff = this.byTransfer.get(transferId)?.handOff;
    if (!handOff) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([handOff.suspended, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
  }

  /** What the call's suspended stream measured, taken once (by the call's end or its resumed stream). */
  takeCarried(callId: string): MeasuredCallUsage | undefined {
    const carried = this.carried.get(callId);
    this.carried.delete(callId);
    return carried?.usage;
  }

  /** Every hold ends (shutdown): the callbacks that would have ended them may reach another process. */
  clear(): void {
    for (const held of this.byTransfer.values()) clearTimeout(held.timer);
    this.byTransfer.clear();
  }

  private keepCarried(callId: string, usage: MeasuredCallUsage): void {
    const now = Date.now();
    // Bounded: a call resumed on another process never takes its entry here.
    for (const [id, entry] of this.carried) if (now - entry.at > CARRIED_USAGE_TTL_MS) this.carried.delete(id);
    this.carried.set(callId, { usage, at: now });
  }
}
