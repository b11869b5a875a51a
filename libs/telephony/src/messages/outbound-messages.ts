import { encodeMediaPayload } from './media-payload';

/**
 * Server -> Twilio messages, as the exact JSON text to put on the socket. Strings are built by hand
 * (with JSON.stringify for anything caller-controlled) because these run once per 20 ms frame and
 * the shapes never change.
 */

/** One outbound media message carries this many bytes (20 ms of 8 kHz mu-law) or a multiple of it. */
export const MULAW_FRAME_BYTES = 160;

/** `{"event":"media",...}` carrying raw mu-law 8 kHz bytes (no WAV header). */
export function buildMediaMessage(streamSid: string, mulaw: Uint8Array): string {
  return `{"event":"media","streamSid":${JSON.stringify(streamSid)},"media":{"payload":"${encodeMediaPayload(mulaw)}"}}`;
}

/** Twilio echoes this name back once all audio sent before it has played (or was cleared). */
export function buildMarkMessage(streamSid: string, name: string): string {
  return `{"event":"mark","streamSid":${JSON.stringify(streamSid)},"mark":{"name":${JSON.stringify(name)}}}`;
}

/** Drops Twilio's buffered, not yet played audio; outstanding marks are echoed at once. */
export function buildClearMessage(streamSid: string): string {
  return `{"event":"clear","streamSid":${JSON.stringify(streamSid)}}`;
}
