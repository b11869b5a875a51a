/**
 * A call in words: how it ended, how long it took, what to title it. Pure, so the calls list, the
 * call page and the Talk panel say the same thing (and a spec can pin it).
 */

/** What these helpers read of a call (GET /v1/calls lists it so; the detail adds to it). */
export interface CallFacts {
  direction: string;
  status: string;
  fromNumber: string;
  toNumber: string;
  startedAt: string;
  answeredAt?: string | null;
  endedAt: string | null;
  endReason: string | null;
  /** Twilio's CallDuration, when Twilio reported it (phone calls). */
  durationSeconds?: number | null;
}

export type Tone = 'live' | 'ok' | 'warning' | 'error';

/** Each end reason the server writes (see the calls API's endReason), as a reader would say it. */
const END_REASON_TEXT: Record<string, string> = {
  stream_stopped: 'hung up',
  connection_lost: 'connection lost',
  server_shutdown: 'server shut down',
  drain_timeout: 'server restarting',
  agent_error: 'agent error',
  agent_not_ready: 'agent not ready',
  protocol_error: 'protocol error',
  agent_hangup: 'agent hung up',
  idle_timeout: 'caller silent too long',
  max_duration: 'longest call reached',
  transferred: 'transferred',
  voicemail_left: 'voicemail left',
  api_hangup: 'ended through the API',
  concurrency_limit: 'too many calls at once',
  budget_exceeded: 'budget spent',
  capacity: 'no inference capacity',
  unknown_number: 'number not bound to an agent',
  twilio_error: 'Twilio error',
  reconciled: 'ended by the reconciler',
};

/** Reasons that mean the call went wrong, however its carrier status reads ("completed"). */
const ERROR_END_REASONS = new Set(['agent_error', 'agent_not_ready', 'protocol_error', 'twilio_error']);
/** Reasons that are not the platform's fault but not a normal end either. */
const WARNING_END_REASONS = new Set(['connection_lost', 'server_shutdown', 'drain_timeout', 'reconciled', 'concurrency_limit', 'budget_exceeded', 'capacity', 'unknown_number']);

export function endReasonText(reason: string | null): string {
  if (reason === null) return '—';
  return END_REASON_TEXT[reason] ?? reason.replace(/_/g, ' ');
}

/** Whether an end reason is an error: the known ones, and any reason named like one. */
export function isErrorEndReason(reason: string | null): boolean {
  return reason !== null && (ERROR_END_REASONS.has(reason) || /(^|_)(error|failed|refused)$|not_ready/.test(reason));
}

export function endReasonTone(reason: string | null): Tone {
  if (reason === null) return 'live';
  if (isErrorEndReason(reason)) return 'error';
  return WARNING_END_REASONS.has(reason) ? 'warning' : 'ok';
}

/**
 * The call's outcome for its status column: "live" until it ends; "error" when it ended on an
 * error (a web call that died on agent_error still has Twilio-style status "completed"); otherwise
 * its status in words.
 */
export function callOutcome(call: CallFacts): { label: string; tone: Tone } {
  if (call.endedAt === null && call.endReason === null) return { label: `${call.status.replace(/-/g, ' ')} (live)`, tone: 'live' };
  if (isErrorEndReason(call.endReason)) return { label: 'error', tone: 'error' };
  if (call.status === 'failed') return { label: 'failed', tone: 'error' };
  if (call.status === 'busy' || call.status === 'no-answer' || call.status === 'canceled') return { label: call.status.replace(/-/g, ' '), tone: 'warning' };
  return { label: call.status.replace(/-/g, ' '), tone: endReasonTone(call.endReason) === 'warning' ? 'warning' : 'ok' };
}

/**
 * How long the call has lasted: Twilio's duration when it gave one, else start to end (or to
 * `nowMs` while it is live). Null for a call that ended before it started (a refused one).
 */
export function callDurationMs(call: CallFacts, nowMs: number): number | null {
  if (call.durationSeconds !== undefined && call.durationSeconds !== null) return call.durationSeconds * 1000;
  const start = Date.parse(call.startedAt);
  const end = call.endedAt === null ? nowMs : Date.parse(call.endedAt);
  if (Number.isNaN(start) || Number.isNaN(end) || end < start) return null;
  return end - start;
}

/** 7 s -> "0:07", 725 s -> "12:05", 3723 s -> "1:02:03". */
export function formatDuration(ms: number | null): string {
  if (ms === null) return '—';
  const total = Math.round(ms / 1000);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${seconds}` : `${minutes}:${seconds}`;
}

/** The agent's name, or a short id for one that was deleted (or is not loaded yet). */
export function agentLabel(agentId: string | null, names: ReadonlyMap<string, string>): string {
  if (agentId === null) return '—';
  return names.get(agentId) ?? `${agentId.slice(0, 8)}…`;
}

/** The call page's title: who called whom, with the agent named rather than the browser's placeholder numbers. */
export function callTitle(call: CallFacts, agentName: string | undefined): string {
  const agent = agentName ?? 'an agent';
  if (call.direction === 'web') return `Browser call to ${agent}`;
  if (call.direction === 'outbound') return `Call from ${agentName ?? call.fromNumber} to ${call.toNumber}`;
  return `Call from ${call.fromNumber} to ${agentName ? `${agentName} (${call.toNumber})` : call.toNumber}`;
}
