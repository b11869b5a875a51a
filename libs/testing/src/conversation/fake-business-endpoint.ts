import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

/** A request as the business's server received it: raw body text, so tests can check signatures. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  bodyText: string;
}

/**
 * The business's check of a request's signature, made as a stock Standard Webhooks receiver would
 * (the official `standardwebhooks` package, not the module under test): `webhook-signature:
 * v1,<base64 HMAC-SHA256 of "${webhook-id}.${webhook-timestamp}.${body}">`, keyed by the
 * base64-decoded part of `secret` after `whsec_`, timestamp within 5 minutes of the real clock.
 * False for a wrong signature; throws for a secret not in `whsec_<base64>` form (a test mistake).
 */
export function signatureIsValid(request: ReceivedRequest, secret: string): boolean {
  if (!/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret)) throw new Error('signatureIsValid: the secret is not a Standard Webhooks secret (whsec_ + base64)');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? (value[0] ?? '') : value;
  }
  try {
    new Webhook(secret).verify(request.bodyText, headers, { jsonParse: false });
    return true;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return false;
    throw error;
  }
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

  /** `host`: the loopback address to listen on (tests of the outbound guard use several). */
  static async start(host = '127.0.0.1'): Promise<FakeBusinessEndpoint> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve());
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
    const { address, port } = this.server.address() as AddressInfo;
    return `http://${address}:${port}${path}`;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
