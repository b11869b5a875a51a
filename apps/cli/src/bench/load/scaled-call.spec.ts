import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { REPLY_WAIT_MAX_MS } from './load-settings';
import { FRAME_BYTES, FRAME_MS, ScaledCall, type ScriptedUtterance } from './scaled-call';

const SILENCE = Buffer.alloc(FRAME_BYTES, 0xff).toString('base64');
const SPEECH = Buffer.alloc(FRAME_BYTES, 0x10).toString('base64');
const REPLY = Buffer.alloc(FRAME_BYTES, 0x20).toString('base64');

/** Two frames of speech, the second holding its end. */
const utterance: ScriptedUtterance = { payloads: [SPEECH, SPEECH], speechEndFrame: 1 };

interface ReceivedFrame {
  payload: string;
  chunk: number;
  timestamp: number;
}

/**
 * A stand-in for the server side of one call: answers the voice webhook with a stream, records the
 * frames the caller sends, and lets the test send a reply frame when it chooses (a slow server).
 */
class StandInServer {
  readonly frames: ReceivedFrame[] = [];
  private socket: WebSocket | undefined;
  private readonly http: Server;
  private readonly sockets: WebSocketServer;

  constructor() {
    this.http = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        const { port } = this.http.address() as AddressInfo;
        response.writeHead(200, { 'content-type': 'text/xml' });
        response.end(`<Response><Connect><Stream url="ws://127.0.0.1:${port}/twilio/media"><Parameter name="callId" value="call-1"/></Stream></Connect></Response>`);
      });
    });
    this.sockets = new WebSocketServer({ server: this.http });
    this.sockets.on('connection', (socket) => {
      this.socket = socket;
      socket.on('message', (data: Buffer) => {
        const message = JSON.parse(data.toString('utf8')) as { event: string; media?: { payload: string; chunk: string; timestamp: string } };
        if (message.event === 'media' && message.media) {
          this.frames.push({ payload: message.media.payload, chunk: Number(message.media.chunk), timestamp: Number(message.media.timestamp) });
        }
      });
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.http.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.http.address() as AddressInfo).port}`;
  }

  reply(): void {
    this.socket?.send(JSON.stringify({ event: 'media', media: { payload: REPLY } }));
  }

  async close(): Promise<void> {
    for (const client of this.sockets.clients) client.terminate();
    await new Promise<void>((resolve) => this.sockets.close(() => resolve()));
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }
}

/** Lets socket messages in both directions arrive. */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 30));

describe('ScaledCall (load bench caller)', () => {
  let server: StandInServer;
  let call: ScaledCall;

  beforeEach(async () => {
    server = new StandInServer();
    const url = await server.listen();
    // Two utterances, each followed by 40 ms (2 frames) of scripted silence.
    call = new ScaledCall({ serverUrl: url, publicBaseUrl: url, authToken: 'token', accountSid: 'AC1', to: '+15550000000' }, [utterance, utterance], [40, 40], SILENCE, '+15551112222');
    await call.connect();
    await settle();
  });

  afterEach(() => server.close());

  it('holds its next utterance while a late reply is pending, and counts the reply once it comes', async () => {
    let now = 0;
    const tick = (): void => {
      call.tick(now);
      now += FRAME_MS;
    };
    // Utterance 1 (2 frames) and its 2 frames of silence; then the next utterance is due.
    for (let i = 0; i < 4; i++) tick();
    // The reply is late: 10 more frames go by. The caller keeps sending silence, not its next utterance.
    for (let i = 0; i < 10; i++) tick();
    await settle();
    expect(server.frames.map((frame) => frame.payload)).toEqual([SPEECH, SPEECH, ...Array<string>(12).fill(SILENCE)]);

    server.reply();
    await settle();
    tick();
    await settle();
    // Heard: the next utterance starts with the following frame.
    expect(server.frames.at(-1)?.payload).toBe(SPEECH);
    // Chunk numbers and timestamps count every frame sent, waited ones included.
    expect(server.frames.map((frame) => frame.chunk)).toEqual(Array.from({ length: 15 }, (_, index) => index + 1));
    expect(server.frames.map((frame) => frame.timestamp)).toEqual(Array.from({ length: 15 }, (_, index) => index * FRAME_MS));
    expect(call.outcome()).toMatchObject({ utterances: 2, answered: 1 });
  });

  it('gives up on a reply after REPLY_WAIT_MAX_MS, counts it unanswered and goes on', async () => {
    let now = 0;
    for (let i = 0; i < 4; i++, now += FRAME_MS) call.tick(now);
    const endOfSpeechAt = FRAME_MS; // the second frame carried the end of speech
    // Just before the bound the caller still waits; at the bound it speaks its next utterance.
    call.tick(endOfSpeechAt + REPLY_WAIT_MAX_MS - 1);
    call.tick(endOfSpeechAt + REPLY_WAIT_MAX_MS);
    await settle();
    expect(server.frames.slice(-2).map((frame) => frame.payload)).toEqual([SILENCE, SPEECH]);

    // The second utterance is never answered either: after its silence the caller waits, then hangs up.
    now = endOfSpeechAt + REPLY_WAIT_MAX_MS + FRAME_MS;
    for (let i = 0; i < 3; i++, now += FRAME_MS) call.tick(now);
    await settle();
    const sentBeforeBound = server.frames.length;
    call.tick(now + REPLY_WAIT_MAX_MS);
    await call.done;
    await settle();
    expect(server.frames.length).toBe(sentBeforeBound);
    expect(call.outcome()).toMatchObject({ utterances: 2, answered: 0 });
  });
});
