import type { IncomingMessage } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import type { StreamAccount } from '@switchboard/persistence';
import { mediaStreamAccountOf, mediaStreamUrl, TwilioSignatureVerifier } from '@switchboard/telephony';
import { PinoLogger } from 'nestjs-pino';
import { TwilioAccountService } from '../accounts/twilio-account.service';

/**
 * Checks the X-Twilio-Signature on the media WebSocket upgrade. Twilio signs the stream URL exactly
 * as our TwiML gave it (PUBLIC_BASE_URL as ws(s) + /twilio/media, plus /<AccountSid> for an
 * organization's own account), with no parameters. The path says whose token verifies it; the
 * account that passed is what the stream may then claim (its own calls only).
 */
@Injectable()
export class MediaUpgradeVerifier {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly accounts: TwilioAccountService,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(MediaUpgradeVerifier.name);
  }

  /** The account the upgrade is signed by, or null (refused: answer 403). Never rejects. */
  async verify(request: IncomingMessage): Promise<StreamAccount | null> {
    const header = request.headers['x-twilio-signature'];
    const signature = Array.isArray(header) ? header[0] : header;
    const pathname = new URL(request.url ?? '/', 'ws://upgrade.invalid').pathname;
    const accountSid = mediaStreamAccountOf(pathname);
    if (accountSid === null) return null;
    try {
      const credentials = accountSid === undefined ? this.accounts.operatorCredentials() : await this.accounts.forAccountSid(accountSid);
      // An account path must name an organization's own account: the operator's calls use the plain path.
      if (!credentials || (accountSid !== undefined && credentials.owner.kind !== 'organization')) {
        this.logger.warn({ pathname }, 'media socket refused: no token for this account (or TWILIO_AUTH_TOKEN is unset)');
        return null;
      }
      const streamUrl = mediaStreamUrl(this.config.publicBaseUrl, accountSid);
      if (!new TwilioSignatureVerifier(credentials.authToken).verifyWebSocket(streamUrl, signature)) {
        this.logger.warn({ remoteAddress: request.socket.remoteAddress, hasSignature: signature !== undefined }, 'media socket refused: bad signature');
        return null;
      }
      return accountSid === undefined ? { kind: 'operator' } : { kind: 'organization', accountSid };
    } catch (error) {
      this.logger.warn({ err: error, pathname }, 'media socket refused: the account could not be checked');
      return null;
    }
  }
}
