import { z } from 'zod';

/**
 * Twilio -> server messages on a Media Streams socket. Parsing is a pure function of the text frame:
 * no state, no I/O, never throws. Order rules (start before media, one start, ...) belong to
 * MediaStreamSession; the base64 audio stays a string here and is decoded by media-payload.ts into
 * a reusable buffer, so the hot path does the decode exactly once.
 */

/** A 20 ms frame is ~300 chars of JSON; anything near this size is a bug or hostile. */
export const MAX_INBOUND_MESSAGE_CHARS = 64 * 1024;

export type InboundParseErrorCode =
  | 'message_too_large'
  | 'invalid_json'
  | 'not_an_object'
  | 'missing_event'
  | 'unknown_event'
  | 'schema_violation';

export interface InboundParseError {
  code: InboundParseErrorCode;
  message: string;
  /** The `event` value when it could be read (helps triage schema violations). */
  event?: string;
  /** Dotted path of the offending field, for `schema_violation`. */
  field?: string;
}

/**
 * Twilio sends counters as decimal strings ("1"). Numbers are accepted too so that a hand-written
 * simulator is not refused over a cosmetic difference; the output is always a safe integer.
 */
const counterSchema = z
  .union([
    z.string().regex(/^\d{1,15}$/, 'expected a non-negative integer (as a decimal string)'),
    z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  ])
  .transform(Number);

const sidSchema = z.string().min(1, 'must not be empty');

const connectedMessageSchema = z.object({
  event: z.literal('connected'),
  protocol: z.string().optional(),
  version: z.string().optional(),
});

const mediaFormatSchema = z.object({
  encoding: z.string(),
  sampleRate: counterSchema,
  channels: counterSchema,
});

const startMessageSchema = z.object({
  event: z.literal('start'),
  sequenceNumber: counterSchema,
  streamSid: sidSchema,
  start: z.object({
    accountSid: sidSchema,
    callSid: sidSchema,
    // Twilio repeats the top-level streamSid here; the session reports a mismatch.
    streamSid: sidSchema.optional(),
    tracks: z.array(z.string()).default([]),
    customParameters: z.record(z.string(), z.string()).default({}),
    mediaFormat: mediaFormatSchema,
  }),
});

const mediaMessageSchema = z.object({
  event: z.literal('media'),
  sequenceNumber: counterSchema,
  streamSid: sidSchema,
  media: z.object({
    track: z.string().default('inbound'),
    chunk: counterSchema,
    /** Milliseconds since the stream started. */
    timestamp: counterSchema,
    /** Base64 mu-law; decode with decodeMediaPayloadInto. */
    payload: z.string(),
  }),
});

const dtmfMessageSchema = z.object({
  event: z.literal('dtmf'),
  sequenceNumber: counterSchema,
  streamSid: sidSchema,
  dtmf: z.object({
    track: z.string().optional(),
    digit: z.string().regex(/^[0-9*#A-D]$/, 'expected one of 0-9, *, #, A-D'),
  }),
});

const markMessageSchema = z.object({
  event: z.literal('mark'),
  sequenceNumber: counterSchema,
  streamSid: sidSchema,
  mark: z.object({ name: z.string() }),
});

// The stop body is optional on purpose: refusing a malformed stop would leave the call looking alive.
const stopMessageSchema = z.object({
  event: z.literal('stop'),
  sequenceNumber: counterSchema,
  streamSid: sidSchema,
  stop: z.object({ accountSid: z.string().optional(), callSid: z.string().optional() }).default({}),
});

export type ConnectedMessage = z.output<typeof connectedMessageSchema>;
export type StartMessage = z.output<typeof startMessageSchema>;
export type MediaMessage = z.output<typeof mediaMessageSchema>;
export type DtmfMessage = z.output<typeof dtmfMessageSchema>;
export type MarkMessage = z.output<typeof markMessageSchema>;
export type StopMessage = z.output<typeof stopMessageSchema>;
export type InboundMessage = ConnectedMessage | StartMessage | MediaMessage | DtmfMessage | MarkMessage | StopMessage;
export type InboundEvent = InboundMessage['event'];
export type MediaFormat = StartMessage['start']['mediaFormat'];

/** Schemas by event name, so an unknown event is told apart from a malformed known one. */
export const inboundMessageSchemas = {
  connected: connectedMessageSchema,
  start: startMessageSchema,
  media: mediaMessageSchema,
  dtmf: dtmfMessageSchema,
  mark: markMessageSchema,
  stop: stopMessageSchema,
} as const;

export type InboundParseResult = { ok: true; message: InboundMessage } | { ok: false; error: InboundParseError };

/** Same rule as counterSchema, without zod: -1 when `value` is not a counter. */
function counterValue(value: unknown): number {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : -1;
  if (typeof value !== 'string' || value.length === 0 || value.length > 15) return -1;
  for (let i = 0; i < value.length; i += 1) {
    const code = value.charCodeAt(i);
    if (code < 48 || code > 57) return -1;
  }
  return Number(value);
}

/**
 * Media is ~50 messages a second per call, so well-formed media skips zod (which costs about as
 * much again as JSON.parse). It accepts exactly what mediaMessageSchema accepts and builds the same
 * output; anything it does not accept falls through to the schema, which then names the field.
 * A spec checks the two agree.
 */
export function fastMediaMessage(value: Record<string, unknown>): MediaMessage | null {
  const { streamSid, media } = value;
  if (typeof streamSid !== 'string' || streamSid.length === 0) return null;
  if (typeof media !== 'object' || media === null || Array.isArray(media)) return null;
  const { track, chunk, timestamp, payload } = media as Record<string, unknown>;
  if (typeof payload !== 'string' || (track !== undefined && typeof track !== 'string')) return null;
  const sequenceNumber = counterValue(value.sequenceNumber);
  const chunkNumber = counterValue(chunk);
  const timestampMs = counterValue(timestamp);
  if (sequenceNumber < 0 || chunkNumber < 0 || timestampMs < 0) return null;
  return {
    event: 'media',
    sequenceNumber,
    streamSid,
    media: { track: track ?? 'inbound', chunk: chunkNumber, timestamp: timestampMs, payload },
  };
}

function isKnownEvent(event: string): event is InboundEvent {
  return Object.prototype.hasOwnProperty.call(inboundMessageSchemas, event);
}

function failure(error: InboundParseError): InboundParseResult {
  return { ok: false, error };
}

/** Parses one Twilio text frame. Never throws; every refusal carries a code and names the field. */
export function parseInboundMessage(text: string): InboundParseResult {
  if (typeof text !== 'string') {
    return failure({ code: 'invalid_json', message: 'expected a text frame (string)' });
  }
  if (text.length > MAX_INBOUND_MESSAGE_CHARS) {
    return failure({
      code: 'message_too_large',
      message: `message is ${text.length} chars; the limit is ${MAX_INBOUND_MESSAGE_CHARS}`,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // V8's message can quote the input, which may hold the stream token: keep only the position.
    const position = /position \d+/.exec(String((error as Error).message))?.[0];
    return failure({ code: 'invalid_json', message: position ? `not valid JSON (at ${position})` : 'not valid JSON' });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return failure({ code: 'not_an_object', message: 'expected a JSON object' });
  }
  const event = (value as { event?: unknown }).event;
  if (typeof event !== 'string') {
    return failure({ code: 'missing_event', message: 'field "event" is missing or not a string', field: 'event' });
  }
  if (!isKnownEvent(event)) {
    return failure({ code: 'unknown_event', message: `unknown event "${event.slice(0, 40)}"`, event: event.slice(0, 40) });
  }
  if (event === 'media') {
    const media = fastMediaMessage(value as Record<string, unknown>);
    if (media !== null) return { ok: true, message: media };
  }
  const parsed = inboundMessageSchemas[event].safeParse(value);
  if (parsed.success) return { ok: true, message: parsed.data };
  const issue = parsed.error.issues[0];
  const field = issue ? issue.path.join('.') : '';
  return failure({
    code: 'schema_violation',
    message: `${event}: ${field || '(root)'}: ${issue?.message ?? 'invalid'}`,
    event,
    field,
  });
}
