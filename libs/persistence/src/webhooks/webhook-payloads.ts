import type { CallRecord } from '../repositories/call-records';
import type { ToolInvocationRecord, TranscriptTurnRecord } from '../repositories/conversation-records';
import type { JsonValue } from '../repositories/json';

/*
 * The `data` of each event. Only what a customer's system needs to act on the event: never a
 * stream token, API key, signing secret or Twilio credential.
 */

/** Same shape for call.started, call.answered and call.ended: the call as it stands at that moment. */
export function callEventData(call: CallRecord) {
  return {
    callId: call.id,
    direction: call.direction,
    from: call.fromNumber,
    to: call.toNumber,
    agentId: call.agentId,
    status: call.status,
    endReason: call.endReason,
    startedAt: call.startedAt.toISOString(),
    answeredAt: call.answeredAt?.toISOString() ?? null,
    endedAt: call.endedAt?.toISOString() ?? null,
    durationSeconds: call.durationSeconds,
    twilioCallSid: call.twilioCallSid,
  };
}

export function transcriptTurnData(callId: string, turn: Omit<TranscriptTurnRecord, 'createdAt'>) {
  return {
    callId,
    turnId: turn.id,
    index: turn.index,
    role: turn.role,
    source: turn.source,
    text: turn.text,
    heardText: turn.heardText,
    interrupted: turn.interrupted,
    startMs: turn.startMs,
    endMs: turn.endMs,
  };
}

export function toolInvocationData(callId: string, invocation: Omit<ToolInvocationRecord, 'createdAt'>) {
  return {
    callId,
    invocationId: invocation.id,
    toolCallId: invocation.toolCallId,
    name: invocation.name,
    arguments: invocation.arguments satisfies JsonValue,
    result: invocation.result,
    error: invocation.error,
    startedAtMs: invocation.startedAtMs,
    latencyMs: invocation.latencyMs,
  };
}
