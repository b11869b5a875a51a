import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { INestApplicationContext } from '@nestjs/common';
import { WsAdapter } from '@nestjs/platform-ws';
import type { StreamAccount } from '@switchboard/persistence';
import { MEDIA_STREAM_PATH, mediaStreamAccountOf } from '@switchboard/telephony';
import type { WebSocketServer } from 'ws';
import { WEB_CALL_MAX_MESSAGE_BYTES, WEB_CALL_PATH } from '../../web-calls/web-call-protocol';
import type { MediaUpgradeVerifier } from './media-upgrade.verifier';

/** Twilio media messages are small (a 20 ms frame is ~300 bytes of JSON); anything huge is hostile. */
export const MEDIA_MAX_PAYLOAD_BYTES = 64 * 1024;

/** The account each accepted upgrade was verified for, read by the gateway when the socket opens. */
const verifiedAccounts = new WeakMap<IncomingMessage, StreamAccount>();

export function verifiedStreamAccount(request: IncomingMessage): StreamAccount | undefined {
  return verifiedAccounts.get(request);
}

/**
 * Nest's `ws` adapter for the two call edges: the browser's web-call socket (WS /v1/web-calls,
 * token-authorised by its first message) and, with three changes, Twilio media streams:
 * - the upgrade is signature-checked before the socket opens (`ws` answers HTTP 403 otherwise),
 *   with the token of the account its path names (`/twilio/media` or `/twilio/media/<AccountSid>`);
 * - those paths are all served by the media gateway (Nest's adapter matches one exact path);
 * - messages are not routed by Nest's `{event, data}` convention: Twilio's `{event, ...}` frames go
 *   to the Twilio transport's own protocol session, attached in the gateway's handleConnection.
 */
export class TwilioMediaWsAdapter extends WsAdapter {
  constructor(
    app: INestApplicationContext,
    private readonly upgradeVerifier: MediaUpgradeVerifier,
  ) {
    super(app);
  }

  override create(port: number, options: Record<string, unknown> = {}): unknown {
    // The browser's call socket: no Twilio signature (its first message presents a token minted for an API key).
    if (options['path'] === WEB_CALL_PATH) return super.create(port, { ...options, maxPayload: WEB_CALL_MAX_MESSAGE_BYTES });
    return super.create(port, {
      ...options,
      maxPayload: MEDIA_MAX_PAYLOAD_BYTES,
      verifyClient: (info: { req: IncomingMessage }, done: (ok: boolean, code?: number, message?: string) => void) => {
        void this.upgradeVerifier.verify(info.req).then((account) => {
          if (!account) return done(false, 403, 'Forbidden');
          verifiedAccounts.set(info.req, account);
          done(true);
        });
      },
    });
  }

  /**
   * Routes upgrades by path prefix rather than Nest's exact match, so an organization's media path
   * (`/twilio/media/<AccountSid>`) reaches the same gateway. Anything else is dropped, as Nest does.
   */
  override ensureHttpServerExists(port: number, httpServer?: Server): Server | undefined {
    const registry = this.httpServersRegistry as Map<number, Server>;
    if (registry.has(port) || httpServer === undefined) return super.ensureHttpServerExists(port, httpServer);
    registry.set(port, httpServer);
    httpServer.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      const servers = (this.wsServersRegistry as Map<number, Array<WebSocketServer & { path?: string }>>).get(port) ?? [];
      const pathname = new URL(request.url ?? '/', 'ws://upgrade.invalid').pathname;
      const target = servers.find((server) => server.path === pathname || (server.path === MEDIA_STREAM_PATH && mediaStreamAccountOf(pathname) !== null));
      if (!target) {
        socket.destroy();
        return;
      }
      target.handleUpgrade(request, socket, head, (ws) => target.emit('connection', ws, request));
    });
    return httpServer;
  }

  override bindMessageHandlers(): void {
    // Intentionally empty: see the class comment.
  }
}
