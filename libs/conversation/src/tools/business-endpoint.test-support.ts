import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A request as the business's server received it: raw body text, so tests can check signatures. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  bodyText: string;
}

export type BusinessReply =
  /** `delayMs`: answer after this long (a slow business). */
  | { status: number; body: string; contentType?: string; headers?: Record<string, string>; delayMs?: number }
  /** Hold the request open without answering (until close()). */
  | 'never';

/**
 * A real HTTP server on 127.0.0.1 standing in for a business's tool endpoint (spec support only).
 * `reply` decides each answer; every request is recorded before it is answered.
 */
export class FakeBusinessEndpoint {
  readonly received: ReceivedRequest[] = [];
  reply: (request: ReceivedRequest) => BusinessReply = () => ({ status: 200, body: '{"ok":true}', contentType: 'application/json' });
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server) {
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const request: ReceivedRequest = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          bodyText: Buffer.concat(chunks).toString('utf8'),
        };
        this.received.push(request);
        const reply = this.reply(request);
        if (reply === 'never') return;
        setTimeout(() => {
          res.writeHead(reply.status, { 'content-type': reply.contentType ?? 'text/plain', ...reply.headers });
          res.end(reply.body);
        }, reply.delayMs ?? 0);
      });
    });
  }

  static async start(): Promise<FakeBusinessEndpoint> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return new FakeBusinessEndpoint(server);
  }

  /** A URL on 127.0.0.1 where nothing listens (connection refused): a port this OS just released. */
  static async refusedUrl(): Promise<string> {
    const endpoint = await FakeBusinessEndpoint.start();
    const url = endpoint.url('/gone');
    await endpoint.close();
    return url;
  }

  url(path = '/tools'): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
