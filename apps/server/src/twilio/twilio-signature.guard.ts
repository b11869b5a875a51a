import { CanActivate, ExecutionContext, ForbiddenException, Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchboard/config';
import { TwilioSignatureVerifier } from '@switchboard/telephony';
import type { Request } from 'express';
import { PinoLogger } from 'nestjs-pino';

/**
 * Rejects any Twilio webhook whose X-Twilio-Signature does not match. The URL that Twilio signed is
 * rebuilt from PUBLIC_BASE_URL (never from Host/X-Forwarded-* headers, which differ behind a TLS
 * proxy and can be forged) plus the original path and query.
 */
@Injectable()
export class TwilioSignatureGuard implements CanActivate {
  private readonly verifier: TwilioSignatureVerifier | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly logger: PinoLogger,
  ) {
    this.logger.setContext(TwilioSignatureGuard.name);
    const token = config.twilio.authToken;
    this.verifier = token ? new TwilioSignatureVerifier(token) : undefined;
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request>();
    if (!this.verifier) {
      this.logger.warn({ path: request.path }, 'Twilio request refused: TWILIO_AUTH_TOKEN is not set, signatures cannot be checked');
      throw forbidden();
    }
    const url = `${this.config.publicBaseUrl}${request.originalUrl}`;
    const params = formParams(request.body);
    const signature = request.header('x-twilio-signature');
    if (!this.verifier.verifyHttp(url, signature, params)) {
      this.logger.warn({ path: request.path, hasSignature: signature !== undefined }, 'Twilio request refused: bad signature');
      throw forbidden();
    }
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
