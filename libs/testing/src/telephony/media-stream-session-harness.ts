import type {
  DtmfEvent,
  MarkEchoEvent,
  MediaFrameEvent,
  MediaStreamHandler,
  ProtocolErrorEvent,
  StreamStartedEvent,
  StreamStoppedEvent,
  MediaStreamSessionOptions,
} from '@switchboard/telephony';
import { MediaStreamSession } from '@switchboard/telephony';

/** Test support for the MediaStreamSession specs and the server's media specs built on a session. */

export const STREAM_SID = 'MZ18ad3ab5a668481ce02b83e7395059f0';
export const CALL_SID = 'CA5b8c5a5f2b6e1f0c2a1b0e9d8c7b6a5f';
export const ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';
export const TOKEN = 'c2VjcmV0LXN0cmVhbS10b2tlbi1mb3ItdGhlLXRlc3Q';

/** Twilio's side of the socket: frames as Twilio writes them, numbered like Twilio numbers them. */
export class FakeTwilio {
  private sequenceNumber = 0;
  private chunk = 0;

  constructor(readonly streamSid = STREAM_SID) {}

  connected(): string {
    return '{"event":"connected","protocol":"Call","version":"1.0.0"}';
  }

  start(mediaFormat = { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 }): string {
    return JSON.stringify({
      event: 'start',
      sequenceNumber: String(this.next()),
      streamSid: this.streamSid,
      start: {
        accountSid: ACCOUNT_SID,
        streamSid: this.streamSid,
        callSid: CALL_SID,
        tracks: ['inbound'],
        customParameters: { callId: 'call-1', streamToken: TOKEN },
        mediaFormat,
      },
    });
  }

  media(bytes: Uint8Array, overrides: { sequenceNumber?: number; payload?: string } = {}): string {
    this.chunk += 1;
    return JSON.stringify({
      event: 'media',
      sequenceNumber: String(overrides.sequenceNumber ?? this.next()),
      streamSid: this.streamSid,
      media: { track: 'inbound', chunk: String(this.chunk), timestamp: String(this.chunk * 20), payload: overrides.payload ?? Buffer.from(bytes).toString('base64') },
    });
  }

  dtmf(digit: string): string {
    return JSON.stringify({ event: 'dtmf', sequenceNumber: String(this.next()), streamSid: this.streamSid, dtmf: { track: 'inbound_track', digit } });
  }

  mark(name: string): string {
    return JSON.stringify({ event: 'mark', sequenceNumber: String(this.next()), streamSid: this.streamSid, mark: { name } });
  }

  stop(sequenceNumber?: number): string {
    return JSON.stringify({
      event: 'stop',
      sequenceNumber: String(sequenceNumber ?? this.next()),
      streamSid: this.streamSid,
      stop: { accountSid: ACCOUNT_SID, callSid: CALL_SID },
    });
  }

  skip(count: number): void {
    this.sequenceNumber += count;
  }

  private next(): number {
    this.sequenceNumber += 1;
    return this.sequenceNumber;
  }
}

/** Records every callback; media payloads are copied because the session reuses their buffer. */
export class RecordingHandler implements MediaStreamHandler {
  starts: StreamStartedEvent[] = [];
  media: { payload: number[]; timestampMs: number; chunk: number; sequenceNumber: number; view: Uint8Array }[] = [];
  dtmf: DtmfEvent[] = [];
  marks: MarkEchoEvent[] = [];
  stops: StreamStoppedEvent[] = [];
  errors: ProtocolErrorEvent[] = [];

  onStart(event: StreamStartedEvent): void {
    this.starts.push(event);
  }
  onMedia(event: MediaFrameEvent): void {
    this.media.push({ ...event, payload: [...event.payload], view: event.payload });
  }
  onDtmf(event: DtmfEvent): void {
    this.dtmf.push(event);
  }
  onMark(event: MarkEchoEvent): void {
    this.marks.push(event);
  }
  onStop(event: StreamStoppedEvent): void {
    this.stops.push(event);
  }
  onProtocolError(event: ProtocolErrorEvent): void {
    this.errors.push(event);
  }
  errorCodes(): string[] {
    return this.errors.map((error) => error.code);
  }
}

export function setup(options?: MediaStreamSessionOptions) {
  const handler = new RecordingHandler();
  const sent: string[] = [];
  const session = new MediaStreamSession(handler, { send: (text) => sent.push(text) }, options);
  const twilio = new FakeTwilio();
  const sentMessages = () => sent.map((text) => JSON.parse(text) as { event: string; streamSid: string; media?: { payload: string }; mark?: { name: string } });
  const sentAudio = () => sentMessages().filter((m) => m.event === 'media').map((m) => [...Buffer.from(m.media?.payload ?? '', 'base64')]);
  return { handler, session, twilio, sent, sentMessages, sentAudio };
}

export function started(options?: MediaStreamSessionOptions) {
  const context = setup(options);
  context.session.receive(context.twilio.connected());
  context.session.receive(context.twilio.start());
  return context;
}

export const frame = (fill: number, length = 160): Uint8Array => new Uint8Array(length).fill(fill);
