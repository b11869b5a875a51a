export type { AgentAudioOutput, AgentCallContext, AgentDescriptor, AgentEngine, AgentSession } from './agent/agent-session';
export { TelephonyAudioInput, TELEPHONY_SAMPLE_RATE } from './audio-io/telephony-audio-input';
export { TelephonyAudioOutput, type MulawSink } from './audio-io/telephony-audio-output';
export { EchoAgentEngine, ECHO_SAMPLE_RATE } from './echo/echo-agent';
