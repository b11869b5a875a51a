import { Injectable } from '@nestjs/common';
import type { LiveCallLabels } from '../metrics/live-call-labels';
import type { CallRuntime } from './call-runtime';

/**
 * The calls this process carries now, whatever carries them (Twilio's media streams, the
 * browser's web calls): one registry for the heartbeat, the live-calls gauge, the drain and the
 * shutdown, and for finding a call's runtime by its id.
 */
@Injectable()
export class LiveCalls {
  private readonly runtimes = new Set<CallRuntime>();

  add(runtime: CallRuntime): void {
    this.runtimes.add(runtime);
  }

  remove(runtime: CallRuntime): void {
    this.runtimes.delete(runtime);
  }

  /** Sockets open now, also those whose token is still being checked. */
  get size(): number {
    return this.runtimes.size;
  }

  all(): CallRuntime[] {
    return [...this.runtimes];
  }

  /** The ids of the calls whose token was accepted (the heartbeat's). */
  callIds(): string[] {
    return this.all().flatMap((runtime) => (runtime.activeCallId === undefined ? [] : [runtime.activeCallId]));
  }

  /** Labels of the calls whose agents run here now (the live-calls gauge). */
  labels(): LiveCallLabels[] {
    return this.all().flatMap((runtime) => (runtime.liveCallLabels === undefined ? [] : [runtime.liveCallLabels]));
  }

  /** The runtimes of call `callId`: the one carrying it, and any whose `start` names it while its token is checked. */
  claiming(callId: string): CallRuntime[] {
    return this.all().filter((runtime) => runtime.claimedOrClaimingCallId === callId);
  }

  /** The runtime carrying call `callId` here, if any. */
  carrying(callId: string): CallRuntime | undefined {
    return this.all().find((runtime) => runtime.activeCallId === callId);
  }

  /** The runtime carrying the phone call Twilio names `callSid` here, if any. */
  carryingPhoneCall(callSid: string): CallRuntime | undefined {
    return this.all().find((runtime) => runtime.phoneCallSid === callSid);
  }

  async shutdown(): Promise<void> {
    await Promise.all(this.all().map((runtime) => runtime.shutdown()));
  }
}
