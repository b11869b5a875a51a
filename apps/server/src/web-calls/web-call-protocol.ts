import { z } from 'zod';

/**
 * The browser's call socket (`WS /v1/web-calls`), the second call edge beside Twilio's media
 * stream. Audio is binary WebSocket messages of raw PCM16 little-endian mono at 16 kHz: what the
 * Web Audio API produces after one resampling step, no codec to ship to the browser, and wideband
 * (twice the telephone's bandwidth), which speech recognition hears better. Control is JSON text.
 *
 * client -> server: {"type":"start","callId","token"} first (the token POST /v1/agents/{id}/web-calls
 *   minted); then binary audio (20 ms = 640 bytes per message is usual, any even length is taken);
 *   {"type":"mark","name"} once the audio before a server mark has played (and, after a `clear`,
 *   once for every mark it discarded, as Twilio does); {"type":"dtmf","digit"}; {"type":"hangup"}.
 * server -> client: {"type":"started","callId","audio"}; binary audio in 20 ms frames; {"type":"mark","name"};
 *   {"type":"clear"} (barge-in: drop what is queued); {"type":"error","code","message"}; {"type":"ended","reason"}.
 */
export const WEB_CALL_PATH = '/v1/web-calls';

export const WEB_CALL_AUDIO = { encoding: 'pcm_s16le', sampleRate: 16_000, channels: 1, frameMs: 20 } as const;
/** 20 ms of 16 kHz PCM16. */
export const WEB_CALL_FRAME_BYTES = (WEB_CALL_AUDIO.sampleRate / 1000) * WEB_CALL_AUDIO.frameMs * 2;
/** Bytes of audio per millisecond. */
export const WEB_CALL_BYTES_PER_MS = (WEB_CALL_AUDIO.sampleRate / 1000) * 2;
/** One message at most: a second of audio, or any control message, with room to spare. */
export const WEB_CALL_MAX_MESSAGE_BYTES = 64 * 1024;

/** Close codes, each saying what went wrong (RFC 6455). */
export const WEB_CALL_CLOSE = {
  normal: 1000,
  /** Too many protocol errors, or a message the protocol does not allow where it came. */
  protocolError: 1002,
  /** Audio that is not PCM16 (an odd number of bytes). */
  unsupportedData: 1003,
  /** The start message's call or token was refused. */
  policy: 1008,
  serverError: 1011,
} as const;

const startMessage = z.strictObject({ type: z.literal('start'), callId: z.string().min(1).max(64), token: z.string().min(16).max(200) });
const markMessage = z.strictObject({ type: z.literal('mark'), name: z.string().min(1).max(100) });
const dtmfMessage = z.strictObject({ type: z.literal('dtmf'), digit: z.string().regex(/^[0-9*#A-D]$/) });
const hangupMessage = z.strictObject({ type: z.literal('hangup') });

export const webCallClientMessage = z.discriminatedUnion('type', [startMessage, markMessage, dtmfMessage, hangupMessage]);
export type WebCallClientMessage = z.infer<typeof webCallClientMessage>;

/** Control messages longer than this are not JSON the protocol sends. */
const MAX_CONTROL_MESSAGE_CHARS = 1024;

export type ParsedClientMessage = { ok: true; message: WebCallClientMessage } | { ok: false; code: 'invalid_json' | 'invalid_message'; message: string };

export function parseWebCallMessage(text: string): ParsedClientMessage {
  if (text.length > MAX_CONTROL_MESSAGE_CHARS) return { ok: false, code: 'invalid_message', message: `control messages are at most ${MAX_CONTROL_MESSAGE_CHARS} characters` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, code: 'invalid_json', message: 'a text message must be JSON' };
  }
  const parsed = webCallClientMessage.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, code: 'invalid_message', message: `${issue?.path.join('.') || 'message'}: ${issue?.message ?? 'invalid'}` };
  }
  return { ok: true, message: parsed.data };
}
