import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toolSignatureIsValid } from './tool-signature';

/** One request the receiver got, and what it answered. */
export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  type: string;
  body: any;
  headers: IncomingHttpHeaders;
  signatureValid: boolean;
  answered: number | 'no answer';
}

/** How the receiver answers: a status code, or never (to exercise the sender's timeout). */
export type ReceiverMode = { status: number } | 'hang';

/**
 * A customer's webhook endpoint on 127.0.0.1: checks each request's signature the way a stock
 * Standard Webhooks receiver would (the official `standardwebhooks` package, independent of the
 * server's signer; see tool-signature.ts) and records it.
 * stop() / start() take it down and bring it back on the SAME port, like a receiver restarting.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  mode: ReceiverMode = { status: 204 };
  /** Set once the subscription (and its secret) exists. */
  secret = '';
  private server: Server | null = null;
  private port = 0;

  /** `host`: the loopback address to listen on (tests of the outbound guard use several). */
  constructor(private readonly host = '127.0.0.1') {}

  get url(): string {
    return `http://${this.host}:${this.port}/hooks`;
  }

  /** Requests answered 2xx with a valid signature, per webhook-id. */
  acceptedCountById(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const request of this.received) {
      if (typeof request.answered === 'number' && request.answered < 300 && request.signatureValid) {
        counts.set(request.id, (counts.get(request.id) ?? 0) + 1);
      }
    }
    return counts;
  }

  /** Never throws (this runs inside the server's request handler): a secret in the wrong form reads as invalid. */
  private signatureIsValid(headers: IncomingHttpHeaders, bodyText: string): boolean {
    if (this.secret.length === 0) return false;
    try {
      return toolSignatureIsValid(this.secret, headers, bodyText);
    } catch {
      return false;
    }
  }

  async start(): Promise<void> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const mode = this.mode;
        const parsed = JSON.parse(text);
        this.received.push({
          id: String(request.headers['webhook-id']),
          timestamp: String(request.headers['webhook-timestamp']),
          type: parsed.type,
          body: parsed,
          headers: request.headers,
          signatureValid: this.signatureIsValid(request.headers, text),
          answered: mode === 'hang' ? 'no answer' : mode.status,
        });
        if (mode === 'hang') return;
        response.writeHead(mode.status, { 'content-type': 'text/plain' }).end(`receiver says ${mode.status}`);
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.host, () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Down hard: open connections are cut, new ones refused until start(). */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
