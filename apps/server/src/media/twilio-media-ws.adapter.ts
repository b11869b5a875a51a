import type { IncomingMessage } from 'node:http';
import type { INestApplicationContext } from '@nestjs/common';
import { WsAdapter } from '@nestjs/platform-ws';
import type { MediaUpgradeVerifier } from './media-upgrade.verifier';

/** Twilio media messages are small (a 20 ms frame is ~300 bytes of JSON); anything huge is hostile. */
export const MEDIA_MAX_PAYLOAD_BYTES = 64 * 1024;

/**
 * Nest's `ws` adapter with two changes for Twilio media streams:
 * - the upgrade is signature-checked before the socket opens (`ws` answers HTTP 403 otherwise);
 * - messages are not routed by Nest's `{event, data}` convention: Twilio's `{event, ...}` frames go
 *   to the connection's own protocol session, attached in the gateway's handleConnection.
 */
export class TwilioMediaWsAdapter extends WsAdapter {
  constructor(
    app: INestApplicationContext,
    private readonly upgradeVerifier: MediaUpgradeVerifier,
  ) {
    super(app);
  }

  override create(port: number, options: Record<string, unknown> = {}): unknown {
    return super.create(port, {
      ...options,
      maxPayload: MEDIA_MAX_PAYLOAD_BYTES,
      verifyClient: (info: { req: IncomingMessage }, done: (ok: boolean, code?: number, message?: string) => void) => {
        if (this.upgradeVerifier.isAllowed(info.req)) done(true);
        else done(false, 403, 'Forbidden');
      },
    });
  }

  override bindMessageHandlers(): void {
    // Intentionally empty: see the class comment.
  }
}
