import type { IncomingMessage } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { mediaStreamUrl, TwilioSignatureVerifier } from '@switchboard/telephony';
import { PinoLogger } from 'nestjs-pino';

/**
 * Checks the X-Twilio-Signature on the media WebSocket upgrade. Twilio signs the stream URL exactly
 * as our TwiML gave it (PUBLIC_BASE_URL as ws(s) + /twilio/media), with no parameters.
 */
@Injectable()
export class MediaUpgradeVerifier {
  private readonly verifier: TwilioSignatureVerifier | undefined;
  private readonly streamUrl: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(MediaUpgradeVerifier.name);
    this.verifier = config.twilio.authToken ? new TwilioSignatureVerifier(config.twilio.authToken) : undefined;
    this.streamUrl = mediaStreamUrl(config.publicBaseUrl);
  }

  isAllowed(request: IncomingMessage): boolean {
    const header = request.headers['x-twilio-signature'];
    const signature = Array.isArray(header) ? header[0] : header;
    if (!this.verifier) {
      this.logger.warn('media socket refused: TWILIO_AUTH_TOKEN is not set, signatures cannot be checked');
      return false;
    }
    const allowed = this.verifier.verifyWebSocket(this.streamUrl, signature);
    if (!allowed) {
      this.logger.warn({ remoteAddress: request.socket.remoteAddress, hasSignature: signature !== undefined }, 'media socket refused: bad signature');
    }
    return allowed;
  }
}
