import type { MeasuredCallUsage } from '@switchboard/billing';

/** Why a call ended, as its runtime saw it (whatever carried it). */
export type CallEndReason =
  | 'stream_stopped'
  | 'connection_lost'
  | 'server_shutdown'
  /** The server drained (a deploy or scale-in) and its bound passed: the caller heard DRAIN_MESSAGE, then the call ended. */
  | 'drain_timeout'
  | 'agent_error'
  | 'protocol_error'
  /** The agent ended the call: end_call tool, idle timeout, max duration, transfer. */
  | 'agent_hangup'
  | 'idle_timeout'
  | 'max_duration'
  | 'transferred'
  /** The agent left its voicemail on an answering machine and hung up (event voicemail_left). */
  | 'voicemail_left';

/** How a call ended, as its connection saw it. */
export interface ConnectionCallEnd {
  endReason: CallEndReason;
  endedAt: Date;
  usage?: MeasuredCallUsage;
}

const AGENT_END_REASONS: readonly string[] = ['agent_hangup', 'idle_timeout', 'max_duration', 'transferred', 'agent_error', 'voicemail_left'];

/** The reason an agent gave for ending its call, as a call end reason ('agent_hangup' when it is not one the agent may give). */
export function agentEndReason(reason: string): CallEndReason {
  return AGENT_END_REASONS.includes(reason) ? (reason as CallEndReason) : 'agent_hangup';
}
