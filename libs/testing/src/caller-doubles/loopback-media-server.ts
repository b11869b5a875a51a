import { randomBytes } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { twiml as Twiml, validateRequest } from 'twilio';
import WebSocket, { WebSocketServer } from 'ws';

/**
 * A tiny stand-in for the Switchboard server, used by the simulated caller's own socket tests:
 * a voice webhook answering <Connect><Stream> with a single-use token, a status callback endpoint
 * and a media socket that echoes audio. It validates every signature with the twilio package
 * (the reference implementation), so the caller's independent signing is checked end to end.
 */

export interface RecordedWebhook {
  params: Record<string, string>;
  signature: string | undefined;
  signatureValid: boolean;
}

export interface LoopbackSession {
  /** Every text frame the caller sent, parsed, in order. */
  readonly messages: Record<string, any>[];
  readonly rawFrames: string[];
  streamSid: string | undefined;
  /** Resolves with the close code the server saw. */
  readonly closed: Promise<number>;
  send(message: object): void;
  close(code?: number): void;
}

export interface LoopbackServerOptions {
  authToken: string;
  publicBaseUrl: string;
  /** Answer to the voice webhook; default: <Connect><Stream> with a fresh token <Parameter>. */
  voiceTwiml?: (params: Record<string, string>, streamUrl: string, token: string) => string;
  /** Called for each parsed caller message after the built-in handling (echo media when `echo`). */
  onMessage?: (session: LoopbackSession, message: Record<string, any>) => void;
  /** Echo every inbound media payload back as outbound audio (default true). */
  echo?: boolean;
}

export class LoopbackMediaServer {
  readonly voiceRequests: RecordedWebhook[] = [];
  readonly statusRequests: RecordedWebhook[] = [];
  readonly upgradeSignatures: { signature: string | undefined; valid: boolean }[] = [];
  readonly sessions: LoopbackSession[] = [];
  /** Token problems the media socket refused (closed with 1008). */
  readonly tokenRejections: string[] = [];
  private readonly http: Server;
  private readonly wss: WebSocketServer;
  private readonly unusedTokens = new Set<string>();

  constructor(private readonly options: LoopbackServerOptions) {
    this.http = createServer((request, response) => void this.onHttp(request, response));
    this.wss = new WebSocketServer({ noServer: true });
    this.http.on('upgrade', (request, socket, head) => {
      const signature = header(request, 'x-twilio-signature');
      const valid = signature !== undefined && validateRequest(options.authToken, signature, this.streamUrl, {});
      this.upgradeSignatures.push({ signature, valid });
      if (request.url !== '/twilio/media' || !valid) {
        socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      this.wss.handleUpgrade(request, socket, head, (ws) => this.onMediaSocket(ws));
    });
  }

  get streamUrl(): string {
    return `${this.options.publicBaseUrl.replace(/^http/, 'ws')}/twilio/media`;
  }

  get url(): string {
    const address = this.http.address() as AddressInfo;
    return `http://127.0.0.1:${address.port}`;
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.http.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  private async onHttp(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const params = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
    const signature = header(request, 'x-twilio-signature');
    const publicUrl = `${this.options.publicBaseUrl}${request.url ?? ''}`;
    const recorded = {
      params,
      signature,
      signatureValid: signature !== undefined && validateRequest(this.options.authToken, signature, publicUrl, params),
    };
    if (request.method !== 'POST' || (request.url !== '/twilio/voice' && request.url !== '/twilio/status')) {
      response.writeHead(404).end();
      return;
    }
    (request.url === '/twilio/voice' ? this.voiceRequests : this.statusRequests).push(recorded);
    if (!recorded.signatureValid) {
      response.writeHead(403, { 'Content-Type': 'text/plain' }).end('invalid signature');
      return;
    }
    if (request.url === '/twilio/status') {
      response.writeHead(204).end();
      return;
    }
    const token = randomBytes(8).toString('hex');
    this.unusedTokens.add(token);
    const xml = this.options.voiceTwiml?.(params, this.streamUrl, token) ?? connectStreamTwiml(this.streamUrl, token);
    response.writeHead(200, { 'Content-Type': 'text/xml' }).end(xml);
  }

  private onMediaSocket(ws: WebSocket): void {
    const messages: Record<string, any>[] = [];
    const rawFrames: string[] = [];
    const session: LoopbackSession = {
      messages,
      rawFrames,
      streamSid: undefined,
      closed: new Promise((resolve) => ws.on('close', (code) => resolve(code))),
      send: (message) => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify(message)),
      close: (code = 1000) => ws.close(code),
    };
    this.sessions.push(session);
    ws.on('message', (data) => {
      const text = (data as Buffer).toString('utf8');
      rawFrames.push(text);
      let message: Record<string, any>;
      try {
        message = JSON.parse(text) as Record<string, any>;
      } catch {
        return;
      }
      messages.push(message);
      if (message['event'] === 'start') {
        session.streamSid = message['streamSid'] as string;
        const token = message['start']?.customParameters?.token as string | undefined;
        // Single use: a replayed or unknown token must not open a second stream.
        if (token === undefined || !this.unusedTokens.delete(token)) {
          this.tokenRejections.push(token ?? '(none)');
          ws.close(1008, 'invalid stream token');
          return;
        }
      }
      if (message['event'] === 'media' && (this.options.echo ?? true)) {
        session.send({ event: 'media', streamSid: session.streamSid, media: { payload: message['media'].payload } });
      }
      this.options.onMessage?.(session, message);
    });
  }
}

export function connectStreamTwiml(streamUrl: string, token: string): string {
  const response = new Twiml.VoiceResponse();
  response.connect().stream({ url: streamUrl }).parameter({ name: 'token', value: token });
  return response.toString();
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
