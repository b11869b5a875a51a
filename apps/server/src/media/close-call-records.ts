import type { MeasuredAiUsage, MeasuredCallUsage } from '@switchboard/billing';
import type { ConversationRecorder } from '@switchboard/conversation';
import type { CallEventBuffer } from './call-event-buffer';
import type { CallEndReason, ConnectionCallEnd } from './call-end-reason';

/** Audio a call edge carried, in milliseconds (each edge converts its own bytes). */
export interface CarriedAudioMs {
  callerAudioMs: number;
  agentAudioSentMs: number;
  agentAudioHeardMs: number;
}

/**
 * The end of a call's records, the same for every edge (Twilio's media stream, the browser's web
 * call): the transcript and events are flushed first, then the call is finalised with its measured
 * usage, so the cost ledger and call.ended see everything the call recorded.
 */
export async function closeCallRecords(input: {
  callId: string;
  reason: CallEndReason;
  openedAt: number;
  recorder: ConversationRecorder | undefined;
  events: CallEventBuffer | undefined;
  usage: { close(callId: string): MeasuredAiUsage };
  audio: CarriedAudioMs;
  finaliseCall(callId: string, end: ConnectionCallEnd): Promise<void>;
}): Promise<void> {
  await input.recorder?.flush();
  await input.events?.close();
  const usage: MeasuredCallUsage = { ...input.usage.close(input.callId), streamMs: Date.now() - input.openedAt, ...input.audio };
  await input.finaliseCall(input.callId, { endReason: input.reason, endedAt: new Date(), usage });
}
