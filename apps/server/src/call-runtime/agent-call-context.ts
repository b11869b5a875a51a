import type { AgentCallContext, CallControl, ConversationRecorder, ResumedCall } from '@switchboard/conversation';
import type { StreamCallContext } from '@switchboard/persistence';

/**
 * What an agent knows of its call, whatever carries it: the claimed call, the carrier's start
 * parameters (a Twilio stream's are our TwiML's; they win a name clash with the call's variables),
 * and what the runtime learnt meanwhile (a verdict that came while the token was checked, a warm
 * transfer it resumes).
 */
export function agentCallContextOf(
  call: StreamCallContext,
  edge: {
    customParameters: Record<string, string>;
    answeredBy: string | undefined;
    resumed: ResumedCall | undefined;
    recorder: ConversationRecorder;
    callControl: CallControl;
    endCall(reason: string): void;
  },
): AgentCallContext {
  return {
    callId: call.callId,
    organizationId: call.organizationId,
    agentId: call.agentId,
    agentConfigVersion: call.agentConfigVersion,
    config: call.agentConfig,
    streamParameters: { ...call.variables, ...edge.customParameters },
    direction: call.direction,
    callerNumber: call.fromNumber,
    calledNumber: call.toNumber,
    callStartedAt: call.startedAt,
    answeredBy: edge.answeredBy ?? call.answeredBy,
    voicemailMessage: call.voicemailMessage,
    ...(edge.resumed !== undefined && { resumed: edge.resumed }),
    recorder: edge.recorder,
    callControl: edge.callControl,
    endCall: edge.endCall,
  };
}
