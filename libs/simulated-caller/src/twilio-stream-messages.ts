/**
 * The Media Streams wire format, written from Twilio's protocol description (not from
 * libs/telephony, so the two sides can disagree and a test will notice). Every number Twilio puts
 * in these messages is a string.
 */

export interface StreamIdentity {
  accountSid: string;
  callSid: string;
  streamSid: string;
}

export function connectedMessage(): string {
  return JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' });
}

export function startMessage(
  sequenceNumber: number,
  identity: StreamIdentity,
  customParameters: Readonly<Record<string, string>>,
): string {
  return JSON.stringify({
    event: 'start',
    sequenceNumber: String(sequenceNumber),
    streamSid: identity.streamSid,
    start: {
      accountSid: identity.accountSid,
      streamSid: identity.streamSid,
      callSid: identity.callSid,
      tracks: ['inbound'],
      customParameters,
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
    },
  });
}

export function mediaMessage(
  sequenceNumber: number,
  streamSid: string,
  chunk: number,
  timestampMs: number,
  payloadBase64: string,
): string {
  return JSON.stringify({
    event: 'media',
    sequenceNumber: String(sequenceNumber),
    streamSid,
    media: { track: 'inbound', chunk: String(chunk), timestamp: String(timestampMs), payload: payloadBase64 },
  });
}

export function dtmfMessage(sequenceNumber: number, streamSid: string, digit: string): string {
  return JSON.stringify({
    event: 'dtmf',
    sequenceNumber: String(sequenceNumber),
    streamSid,
    dtmf: { track: 'inbound_track', digit },
  });
}

export function markEchoMessage(sequenceNumber: number, streamSid: string, name: string): string {
  return JSON.stringify({ event: 'mark', sequenceNumber: String(sequenceNumber), streamSid, mark: { name } });
}

export function stopMessage(sequenceNumber: number, identity: StreamIdentity): string {
  return JSON.stringify({
    event: 'stop',
    sequenceNumber: String(sequenceNumber),
    streamSid: identity.streamSid,
    stop: { accountSid: identity.accountSid, callSid: identity.callSid },
  });
}

/** What the server may send on the media socket, validated. */
export type ServerStreamMessage =
  | { event: 'media'; payload: Uint8Array }
  | { event: 'mark'; name: string }
  | { event: 'clear' };

export type ServerMessageParseResult = { ok: true; message: ServerStreamMessage } | { ok: false; error: string };

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Checks a server frame as strictly as Twilio would act on it. Anything Twilio would ignore or
 * reject becomes an error string, so tests can assert the server never produced one.
 */
export function parseServerMessage(text: string, expectedStreamSid: string): ServerMessageParseResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, error: `not JSON: ${preview(text)}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, error: `not a JSON object: ${preview(text)}` };
  }
  const message = value as Record<string, unknown>;
  const event = message['event'];
  if (message['streamSid'] !== expectedStreamSid) {
    return { ok: false, error: `${String(event)}: streamSid ${JSON.stringify(message['streamSid'])} is not this stream's` };
  }
  switch (event) {
    case 'media': {
      const media = message['media'] as Record<string, unknown> | undefined;
      const payload = media?.['payload'];
      if (typeof payload !== 'string' || payload.length === 0 || !BASE64.test(payload)) {
        return { ok: false, error: 'media: payload missing, empty or not base64' };
      }
      const bytes = Buffer.from(payload, 'base64');
      return { ok: true, message: { event: 'media', payload: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length) } };
    }
    case 'mark': {
      const mark = message['mark'] as Record<string, unknown> | undefined;
      const name = mark?.['name'];
      if (typeof name !== 'string' || name === '') return { ok: false, error: 'mark: mark.name missing or empty' };
      return { ok: true, message: { event: 'mark', name } };
    }
    case 'clear':
      return { ok: true, message: { event: 'clear' } };
    default:
      return { ok: false, error: `unknown event ${JSON.stringify(event)}` };
  }
}

function preview(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
