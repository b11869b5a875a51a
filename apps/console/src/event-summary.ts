import { endReasonText, isErrorEndReason } from './call-text';

/**
 * A call event (GET /v1/calls/:id `events`) in one line a reader understands. The payload stays
 * one click away on the call page; this is what the row says without it. Unknown types fall back
 * to their scalar fields, so a new event still reads as something.
 */

export interface EventLike {
  type: string;
  payload: unknown;
}

type Payload = Record<string, unknown>;
type Summary = (payload: Payload) => string;

const ENGINE_NAMES: Record<string, string> = { llm_error: 'The language model', tts_error: 'Speech synthesis', asr_error: 'Speech recognition', realtime_error: 'The realtime model' };

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
}

function seconds(ms: unknown): string | undefined {
  return typeof ms === 'number' ? `${(ms / 1000).toFixed(1)} s` : undefined;
}

function quoted(value: unknown, max = 60): string | undefined {
  const said = text(value);
  if (said === undefined) return undefined;
  return `“${said.length > max ? `${said.slice(0, max - 1)}…` : said}”`;
}

function words(code: unknown): string | undefined {
  const value = text(code);
  return value?.replace(/_/g, ' ');
}

/** An error payload (errorPayload on the server: engine, code, message; a refused config adds problems). */
function errorText(payload: Payload): string {
  const problems = Array.isArray(payload.problems)
    ? (payload.problems as Array<{ path?: unknown; message?: unknown }>).map((problem) => [text(problem.path), text(problem.message)].filter(Boolean).join(': ')).filter(Boolean)
    : [];
  const message = text(payload.message) ?? words(payload.code) ?? 'no reason given';
  return problems.length > 0 ? `${message} (${problems.join('; ')})` : message;
}

const SUMMARIES: Record<string, Summary> = {
  stream_started: (p) => {
    const audio = p.audio as { sampleRate?: unknown } | undefined;
    const rate = typeof audio?.sampleRate === 'number' ? `, ${audio.sampleRate / 1000} kHz` : '';
    return p.transport === 'web' ? `Audio connected (browser${rate})` : 'Audio connected (Twilio media stream)';
  },
  stream_stopped: (p) => (p.by === 'browser' ? 'The browser hung up' : 'The caller or Twilio ended the audio stream'),
  stream_closed: (p) => {
    const parts = [`Audio closed (${endReasonText(text(p.reason) ?? null)})`];
    if (seconds(p.durationMs)) parts.push(`after ${seconds(p.durationMs)}`);
    if (seconds(p.heardMs)) parts.push(`the agent was heard for ${seconds(p.heardMs)}`);
    return parts.join(', ');
  },
  turn_ended: (p) => {
    const waitMs = typeof p.endOfTurnMs === 'number' && typeof p.endOfSpeechMs === 'number' ? p.endOfTurnMs - p.endOfSpeechMs : undefined;
    const wait = waitMs === undefined ? '' : `, ${waitMs < 1000 ? `${Math.round(waitMs)} ms` : seconds(waitMs)} after they stopped speaking`;
    return `The caller’s turn ended (${words(p.reason) ?? 'silence'})${wait}`;
  },
  barge_in: (p) => {
    const heard = quoted(p.heardText);
    return `The caller interrupted the agent${p.cause === 'dtmf' ? ' with a key' : ''}${heard ? ` after hearing ${heard}` : ''}`;
  },
  assistant_turn_cut: (p) => `The agent’s reply was cut (${words(p.why) ?? 'interrupted'})`,
  error: (p) => `Error${p.code ? ` (${words(p.code)})` : ''}: ${errorText(p)}`,
  agent_gave_up: (p) => `The agent gave up after ${text(p.consecutiveFailures) ?? 'several'} failed answers in a row`,
  agent_closed: (p) => `The agent stopped (${words(p.reason) ?? 'call ended'})`,
  dtmf: (p) => `Key pressed: ${text(p.digit) ?? '?'}`,
  dtmf_forwarded: (p) => `Keys passed to the agent: ${text(p.digits) ?? text(p.digit) ?? '?'}`,
  idle_timeout: (p) => `The caller stayed silent; the agent said goodbye after ${text(p.prompts) ?? 'its'} prompts`,
  max_duration_reached: (p) => `The call reached its longest allowed duration${typeof p.maxDurationS === 'number' ? ` (${p.maxDurationS} s)` : ''}`,
  reply_limit_reached: (p) => `A reply was cut at its length limit${seconds(p.maxReplyMs) ? ` (${seconds(p.maxReplyMs)})` : ''}`,
  call_transferred: (p) => `Transferred to ${text(p.to) ?? 'another number'}`,
  transfer_failed: (p) => `The transfer to ${text(p.to) ?? 'another number'} failed: ${errorText(p)}`,
  drain_message: (p) => `The server is restarting; the caller was told ${quoted(p.message, 80) ?? 'so'}`,
  protocol_error: (p) => `Protocol error (${words(p.code) ?? 'unknown'}): ${text(p.message) ?? ''}${p.fatal === true ? '; the call was ended' : ''}`,
  amd_result: (p) => `Answered by: ${words(p.answeredBy) ?? 'unknown'}`,
  twilio_error: (p) => `Twilio refused${p.operation ? ` ${text(p.operation)}` : ''}: ${errorText(p)}`,
  hangup_requested: (p) => `Hang-up requested${p.by === 'api' ? ' through the API' : ''}`,
  reconciled: (p) => `Ended by the reconciler (${p.streamStarted === true ? 'the audio stopped without an end' : 'no audio ever arrived'})`,
  empty_transcript: () => 'The caller made a sound, but nothing was transcribed',
  voicemail_started: () => 'An answering machine answered: the agent leaves its voicemail',
  tool_error: (p) => `Tool ${text(p.name) ?? ''} failed: ${errorText(p)}`.replace('Tool  ', 'A tool '),
  info: (p) => text(p.message) ?? 'Note',
  warn: (p) => `Warning: ${text(p.message) ?? words(p.code) ?? ''}`,
};

/** One line for the event: its known meaning, or its scalar fields. */
export function summarizeEvent(event: EventLike): string {
  const payload = (typeof event.payload === 'object' && event.payload !== null ? event.payload : {}) as Payload;
  const known = SUMMARIES[event.type];
  if (known) return known(payload);
  const engine = ENGINE_NAMES[event.type];
  if (engine) return `${engine} failed: ${errorText(payload)}`;
  const fields = Object.entries(payload)
    .map(([key, value]) => [key, text(value)] as const)
    .filter((entry): entry is readonly [string, string] => entry[1] !== undefined)
    .slice(0, 4)
    .map(([key, value]) => `${key.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase()}: ${value.length > 60 ? `${value.slice(0, 59)}…` : value}`);
  return fields.length > 0 ? fields.join(', ') : '';
}

/** An event that says something went wrong (its row is marked; the Talk panel quotes it). */
export function eventTone(type: string): 'error' | 'warning' | undefined {
  if (type === 'error' || type.endsWith('_error') || type === 'agent_gave_up') return 'error';
  if (type.endsWith('_failed') || type.endsWith('_unavailable') || type.endsWith('_dropped') || type === 'warn' || type === 'reconciled') return 'warning';
  return undefined;
}

/** An event type as words for its column: `turn_ended` -> "turn ended". */
export function eventTypeText(type: string): string {
  return type.replace(/_/g, ' ');
}

/**
 * Why a call ended on an error, for a reader: the error that ended it (the first `error` event;
 * after repeated engine failures, the agent giving up and the last failure), else its end reason
 * in words. Undefined for a call that did not end on an error (an engine failure the agent
 * apologised for and recovered from is in the event log, not a reason the call ended).
 */
export function callFailureText(endReason: string | null, events: readonly EventLike[]): string | undefined {
  if (!isErrorEndReason(endReason)) return undefined;
  const errors = events.filter((event) => eventTone(event.type) === 'error');
  const fatal = errors.find((event) => event.type === 'error') ?? errors.find((event) => event.type === 'agent_gave_up') ?? errors.at(-1);
  if (!fatal) return `The call ended with ${endReasonText(endReason)}.`;
  const because = fatal.type === 'agent_gave_up' ? errors.filter((event) => event.type !== 'agent_gave_up').at(-1) : undefined;
  return sentence(because ? `${summarizeEvent(fatal)}. The last failure: ${summarizeEvent(because)}` : summarizeEvent(fatal));
}

function sentence(line: string): string {
  return /[.!?]$/.test(line) ? line : `${line}.`;
}
