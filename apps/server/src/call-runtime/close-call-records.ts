import type { MeasuredAiUsage, MeasuredCallUsage } from '@switchboard/billing';
import type { ConversationRecorder } from '@switchboard/conversation';
import type { CallEventBuffer } from './records/call-event-buffer';
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
 * usage, so the cost ledger and call.ended see everything the call recorded. `carried`: what an
 * earlier media stream of the same call measured (a warm transfer that came back), added in.
 */
export async function closeCallRecords(input: {
  callId: string;
  reason: CallEndReason;
  openedAt: number;
  recorder: ConversationRecorder | undefined;
  events: CallEventBuffer | undefined;
  usage: { close(callId: string): MeasuredAiUsage };
  audio: CarriedAudioMs;
  carried?: MeasuredCallUsage;
  finaliseCall(callId: string, end: ConnectionCallEnd): Promise<void>;
}): Promise<void> {
  await input.recorder?.flush();
  await input.events?.close();
  const own: MeasuredCallUsage = { ...input.usage.close(input.callId), streamMs: Date.now() - input.openedAt, ...input.audio };
  const usage = input.carried ? addUsage(own, input.carried) : own;
  await input.finaliseCall(input.callId, { endReason: input.reason, endedAt: new Date(), usage });
}

/**
 * A media stream that ends without ending its call (a warm transfer holds the caller): its usage is
 * measured at once (the meter is closed before anything awaits, so a stream that resumes the call
 * opens a meter of its own), then its records are flushed. The call stays open.
 */
export async function suspendCallRecords(input: {
  callId: string;
  openedAt: number;
  recorder: ConversationRecorder | undefined;
  events: CallEventBuffer | undefined;
  usage: { close(callId: string): MeasuredAiUsage };
  audio: CarriedAudioMs;
}): Promise<MeasuredCallUsage> {
  const usage: MeasuredCallUsage = { ...input.usage.close(input.callId), streamMs: Date.now() - input.openedAt, ...input.audio };
  await input.recorder?.flush();
  await input.events?.close();
  return usage;
}

/** Two measurements of one call added up, meter by meter (every meter is a count). */
export function addUsage(a: MeasuredCallUsage, b: MeasuredCallUsage): MeasuredCallUsage {
  const sum = { ...a };
  for (const key of Object.keys(b) as (keyof MeasuredCallUsage)[]) sum[key] = (a[key] ?? 0) + (b[key] ?? 0);
  return sum;
}
