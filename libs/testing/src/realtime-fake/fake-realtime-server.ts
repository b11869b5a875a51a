import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { FakeRealtimeConnection, type FakeAutoTurn } from './fake-realtime-connection';

export const FAKE_REALTIME_PATH = '/v1/realtime';

export interface FakeRealtimeServerOptions {
  /** The key clients must present as `Authorization: Bearer <key>`; anything else gets 401. */
  apiKey: string;
  /** Applied to every new connection (see FakeRealtimeConnection.autoTurn). */
  autoTurn?: FakeAutoTurn;
}

/** One WebSocket upgrade request, as the fake saw it (the key itself is not kept). */
export interface FakeUpgradeRecord {
  path: string;
  model: string | null;
  authorized: boolean;
  betaHeader: string | undefined;
  /** 101 when upgraded; the refusal status otherwise; 0 when the fake stalled it. */
  status: number;
}

/**
 * A local stand-in for the OpenAI Realtime WebSocket endpoint, on 127.0.0.1 and a free port:
 * checks the bearer key, speaks enough of the protocol for a speech-to-speech engine's tests (see
 * FakeRealtimeConnection), and fails on demand: refused upgrades, stalled upgrades, and, per
 * connection, closes, malformed frames and error events.
 */
export class FakeRealtimeServer {
  readonly upgrades: FakeUpgradeRecord[] = [];
  readonly connections: FakeRealtimeConnection[] = [];
  private readonly http: Server;
  private readonly wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  private readonly failures: ({ kind: 'reject'; status: number } | { kind: 'stall' })[] = [];
  private readonly stalled = new Set<Duplex>();
  private readonly connectionWaiters: ((connection: FakeRealtimeConnection) => void)[] = [];

  constructor(private readonly options: FakeRealtimeServerOptions) {
    this.http = createServer((_request, response) => response.writeHead(426, { 'Content-Type': 'text/plain' }).end('WebSocket only'));
    this.http.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => this.onUpgrade(request, socket, head));
  }

  /** e.g. ws://127.0.0.1:40123/v1/realtime: what an engine's `baseUrl` should be. */
  get baseUrl(): string {
    return `ws://127.0.0.1:${(this.http.address() as AddressInfo).port}${FAKE_REALTIME_PATH}`;
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.http.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    for (const socket of this.stalled) socket.destroy();
    this.stalled.clear();
    for (const client of this.wss.clients) client.terminate();
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  /** Refuse the next `count` upgrades with this HTTP status (e.g. 401, 429, 500). */
  rejectUpgrades(status: number, count = 1): void {
    for (let i = 0; i < count; i += 1) this.failures.push({ kind: 'reject', status });
  }

  /** Hold the next `count` upgrades open without ever answering (to exercise connect timeouts). */
  stallUpgrades(count = 1): void {
    for (let i = 0; i < count; i += 1) this.failures.push({ kind: 'stall' });
  }

  /** The most recent connection; throws when there is none yet. */
  get lastConnection(): FakeRealtimeConnection {
    const connection = this.connections[this.connections.length - 1];
    if (connection === undefined) throw new Error('fake realtime: no connection yet');
    return connection;
  }

  /** Resolves with the next connection established after this call. */
  nextConnection(timeoutMs = 5000): Promise<FakeRealtimeConnection> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const index = this.connectionWaiters.indexOf(waiter);
        if (index >= 0) this.connectionWaiters.splice(index, 1);
        reject(new Error(`fake realtime: no connection within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = (connection: FakeRealtimeConnection): void => {
        clearTimeout(timer);
        resolve(connection);
      };
      this.connectionWaiters.push(waiter);
    });
  }

  private onUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const betaHeader = headerOf(request, 'openai-beta');
    const record: FakeUpgradeRecord = {
      path: url.pathname,
      model: url.searchParams.get('model'),
      authorized: headerOf(request, 'authorization') === `Bearer ${this.options.apiKey}`,
      betaHeader,
      status: 101,
    };
    this.upgrades.push(record);
    const failure = this.failures.shift();
    if (failure?.kind === 'stall') {
      record.status = 0;
      this.stalled.add(socket);
      socket.once('close', () => this.stalled.delete(socket));
      return;
    }
    const refusal =
      failure?.kind === 'reject'
        ? failure.status
        : url.pathname !== FAKE_REALTIME_PATH
          ? 404
          : !record.authorized
            ? 401
            : record.model === null || record.model === ''
              ? 400
              : undefined;
    if (refusal !== undefined) {
      record.status = refusal;
      const body = JSON.stringify({ error: { type: 'invalid_request_error', message: `fake realtime refused with ${refusal}` } });
      socket.end(
        `HTTP/1.1 ${refusal} Refused\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    (socket as Socket).setNoDelay?.(true);
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      const connection = new FakeRealtimeConnection(ws, betaHeader === 'realtime=v1' ? 'beta' : 'ga', record.model ?? '');
      connection.autoTurn = this.options.autoTurn;
      this.connections.push(connection);
      const waiter = this.connectionWaiters.shift();
      waiter?.(connection);
    });
  }
}

function headerOf(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
