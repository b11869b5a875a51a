import { CanActivate, ExecutionContext, ForbiddenException, Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { TwilioSignatureVerifier } from '@switchboard/telephony';
import type { Request } from 'express';
import { PinoLogger } from 'nestjs-pino';
import { TwilioAccountService, type TwilioAccountCredentials } from '../accounts/twilio-account.service';

/** A Twilio request whose signature checked out, with the account that signed it. */
import { voiceDeadlineOf, withinVoiceDeadline } from './voice-answer-deadline';

export type SignedTwilioRequest = Request & { twilioAccount: TwilioAccountCredentials };

/**
 * Rejects any Twilio webhook whose X-Twilio-Signature does not match the token of the account it is
 * for: an organization's own account (its token from the vault) or the operator's (TWILIO_AUTH_TOKEN).
 * The URL that Twilio signed is rebuilt from PUBLIC_BASE_URL (never from Host/X-Forwarded-* headers,
 * which differ behind a TLS proxy and can be forged) plus the original path and query. The verified
 * account goes on the request: handlers check it may speak for the call or number it names.
 */
@Injectable()
export class TwilioSignatureGuard implements CanActivate {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly accounts: TwilioAccountService,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(TwilioSignatureGuard.name);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<SignedTwilioRequest>();
    const params = formParams(request.body);
    const accountSid = params['AccountSid'] ?? '';
    // The voice webhook must be answered within Twilio's timeout even when the database is slow.
    const lookup = this.accounts.forAccountSid(accountSid);
    const account = request.path.endsWith('/voice') ? await withinVoiceDeadline(lookup, voiceDeadlineOf(request)) : await lookup;
    if (!account) {
      this.logger.warn({ path: request.path, accountSid: accountSid.slice(0, 34) }, 'Twilio request refused: no organization or operator holds this account (or TWILIO_AUTH_TOKEN is unset)');
      throw forbidden();
    }
    const url = `${this.config.publicBaseUrl}${request.originalUrl}`;
    const signature = request.header('x-twilio-signature');
    if (!new TwilioSignatureVerifier(account.authToken).verifyHttp(url, signature, params)) {
      this.logger.warn({ path: request.path, hasSignature: signature !== undefined }, 'Twilio request refused: bad signature');
      throw forbidden();
    }
    request.twilioAccount = account;
    return true;
  }
}

function forbidden(): ForbiddenException {
  return new ForbiddenException({ statusCode: 403, error: 'Forbidden', code: 'invalid_twilio_signature', message: 'Signature check failed.' });
}

/** Twilio signs flat string form fields; anything else (JSON, nested) cannot have been signed by it. */
function formParams(body: unknown): Record<string, string> {
  const params: Record<string, string> = {};
  if (body && typeof body === 'object') {
    for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
      if (typeof value === 'string') params[name] = value;
    }
  }
  return params;
}
